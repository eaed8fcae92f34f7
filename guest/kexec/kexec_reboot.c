/*
 * kexec_reboot.c - load a kernel with kexec_file_load() and reboot into it
 *
 *   kexec_reboot KERNEL INITRD CMDLINE
 *
 * Loads the arm64 Image KERNEL with the initramfs INITRD and the command
 * line CMDLINE, syncs and reboots into it with LINUX_REBOOT_CMD_KEXEC. It
 * only returns on failure: it prints why and exits 1.
 *
 * Build: aarch64-linux-gnu-gcc -static -O2
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/reboot.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int open_input(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fprintf(stderr, "kexec_reboot: %s: %s\n", path, strerror(errno));
	return fd;
}

int main(int argc, char **argv)
{
	int kernel_fd, initrd_fd;
	const char *cmdline;

	if (argc != 4) {
		fprintf(stderr, "usage: kexec_reboot KERNEL INITRD CMDLINE\n");
		return 2;
	}
	cmdline = argv[3];
	kernel_fd = open_input(argv[1]);
	initrd_fd = open_input(argv[2]);
	if (kernel_fd < 0 || initrd_fd < 0)
		return 1;

	/* The length counts the terminating NUL. */
	if (syscall(SYS_kexec_file_load, kernel_fd, initrd_fd,
		    strlen(cmdline) + 1, cmdline, 0UL)) {
		fprintf(stderr, "kexec_reboot: kexec_file_load: %s\n", strerror(errno));
		return 1;
	}
	printf("kexec_reboot: loaded %s, rebooting into it\n", argv[1]);
	fflush(stdout);

	sync();
	syscall(SYS_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2,
		LINUX_REBOOT_CMD_KEXEC, NULL);
	fprintf(stderr, "kexec_reboot: reboot(LINUX_REBOOT_CMD_KEXEC): %s\n", strerror(errno));
	return 1;
}
