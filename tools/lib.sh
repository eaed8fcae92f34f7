# Shared helpers for the workbench scripts. Source it; do not run it.
# shellcheck shell=bash

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=tools/versions
. "$TOP/tools/versions"

# Everything downloaded or built outside the tracked tree lives here and is
# reused by every clone on this machine.
CACHE=${KPKEYS_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/kpkeys}
ROOTFS=$CACHE/debian13-root
LINUX=${KPKEYS_LINUX:-$TOP/build/linux}
OUT=${KPKEYS_OUT:-$CACHE/out}
LOGS=$TOP/build/logs
mkdir -p "$CACHE" "$OUT" "$LOGS"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
warn() { printf '\n*** WARNING: %s ***\n\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
# A variable set to something the scripts cannot use: exit 2, as for usage.
bad_input() { printf 'error: %s\n' "$*" >&2; exit 2; }

# The variables the workbench reads from the environment (make passes its
# command-line variables there), checked before any work starts. Names with
# our prefixes that nothing reads are usually typos (POE_OPT= for POE_OPTS=).
KNOWN_VARIABLES="KPKEYS_CACHE KPKEYS_LINUX KPKEYS_MIRROR KPKEYS_OUT KPKEYS_BIND KPKEYS_AUTHOR KPKEYS_SERIES_VERSION POE POE_OPTS POE_DEBUG"
is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
check_environment() {
	local v val
	for v in POE OOPS SMP NUMA HUGEPAGES BOOT_TIMEOUT MEM CLOCK KCONFIG_ALLOW_MISSING; do
		val=${!v-}
		[ -n "$val" ] || continue
		case $v in
		POE) [[ $val =~ ^(on|off)$ ]] || bad_input "POE=$val: use POE=on (boot with the POE emulator) or POE=off" ;;
		OOPS) [[ $val =~ ^(panic|continue)$ ]] || bad_input "OOPS=$val: use OOPS=panic (the default) or OOPS=continue" ;;
		SMP | NUMA | BOOT_TIMEOUT)
			if ! is_uint "$val" || [ "$((10#$val))" -lt 1 ]; then
				bad_input "$v=$val: must be a whole number of at least 1"
			fi ;;
		HUGEPAGES) is_uint "$val" || bad_input "HUGEPAGES=$val: must be a whole number (0: none)" ;;
		MEM) [[ $val =~ ^[1-9][0-9]*[KMGT]?$ ]] || bad_input "MEM=$val: a guest memory size such as 1G or 512M" ;;
		CLOCK) [[ $val =~ ^(host|insns)$ ]] || bad_input "CLOCK=$val: use CLOCK=host (the default) or CLOCK=insns" ;;
		KCONFIG_ALLOW_MISSING) [[ $val =~ ^[01]$ ]] || bad_input "KCONFIG_ALLOW_MISSING=$val: must be 0 or 1" ;;
		esac
	done
	[ -z "${_KPKEYS_ENV_CHECKED:-}" ] || return 0
	export _KPKEYS_ENV_CHECKED=1
	for v in $(compgen -e | grep -E '^(KPKEYS|POE)_' || true); do
		case " $KNOWN_VARIABLES " in *" $v "*) continue ;; esac
		warn "$v is set but nothing reads it (known: $KNOWN_VARIABLES); a typo?"
	done
}
check_environment

# Run "$@" and print how long it took, so every phase shows its cost.
timed() {
	local name=$1 t0 rc=0
	shift
	t0=$(date +%s)
	"$@" || rc=$?
	log "phase $name: $(($(date +%s) - t0))s$([ "$rc" = 0 ] || echo " (failed, rc=$rc)")"
	return "$rc"
}

# The emulator's window report $1 (windows=) of the boot named $2: its
# total and the first 20 functions outside the allow lists ("leaks").
# Returns 0 without a leak, 1 with, 2 if the report has no total.
window_leaks_report() {
	local f=$1 boot=$2 total leaks
	total=$(sed -n 's/^poe-window-total: //p' "$f" 2>/dev/null)
	if [ -z "$total" ]; then
		echo "FAILED: window leaks: no poe-window-total line in $f"
		return 2
	fi
	leaks=$(sed -n 's/.* leaks=\([0-9]*\).*/\1/p' <<<"$total")
	echo "window leaks ($boot boot): $total"
	# No leak, no match: grep's status is not the report's.
	{ grep ' allowed=0$' "$f" || true; } | head -n 20 | sed 's/^poe-window: /  leak: /'
	[ "$leaks" = 0 ]
}

# Write the gzipped cpio archive (newc) of directory $1 to stdout. The
# same files give the same bytes: times, owners and inode numbers are not
# the build's. A bench guest that unpacks different bytes executes a
# different number of instructions while booting and reserves different
# memory, which moves the timer ticks and the state of its random number
# generator: the bench rows then differ between two runs of the same
# kernels (bench/README.md).
pack_initramfs() {
	find "$1" -exec touch -h -d @0 {} +
	(cd "$1" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 --reproducible | gzip -n -1)
}

# Replace $2 by $1 atomically, so an interrupted run never leaves a
# half-written cache entry behind.
commit_path() {
	rm -rf "$2.old"
	[ -e "$2" ] && mv "$2" "$2.old"
	mv "$1" "$2"
	rm -rf "$2.old"
}

# Wait up to $2 seconds until no process holds a lock on file $1, as
# /proc/locks lists them (device:inode). QEMU locks its disk images; a boot
# started right after another one on the same image (tools/boot) has
# stopped with 'Failed to get "write" lock' although the first QEMU had
# exited: the last reference to the image, and with it the lock, can be
# dropped a moment after the process is gone (io_uring, which this QEMU
# links, cleans up its rings asynchronously). Returns 1 if still locked.
wait_unlocked() {
	local major minor inode key tries=$(($2 * 10))
	read -r major minor inode < <(stat -c '%Hd %Ld %i' "$1") || return 1
	key=$(printf '%02x:%02x:%s' "$major" "$minor" "$inode")
	while grep -qF " $key " /proc/locks; do
		[ "$tries" -gt 0 ] || return 1
		tries=$((tries - 1))
		sleep 0.1
	done
}

# Is the git repository $1 whole and does it have revision $2? A cache
# entry that fails this (truncated copy, lost objects) is recreated.
git_repo_ok() {
	git -C "$1" rev-parse -q --verify "$2^{commit}" >/dev/null 2>&1 &&
		git -C "$1" fsck --connectivity-only --no-dangling >/dev/null 2>&1
}

# Install missing Debian 12 host packages, naming whatever cannot be had.
ensure_host_packages() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing host packages: ${missing[*]}"
	apt-get update -qq >/dev/null 2>&1 || die "apt-get update failed: is the Debian archive reachable?"
	for p in "${missing[@]}"; do
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends "$p" >/dev/null 2>&1 ||
			die "cannot install host package '$p' (apt-get install $p)"
	done
}

# apt-get with a private state directory that sees Debian 13 and its
# backports, for both amd64 and arm64, without touching the host's apt.
APT_DIR=$CACHE/apt
# Usage: apt_private apt-get|apt-cache ARGS...
apt_private() {
	local cmd=$1
	shift
	mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/archives/partial" "$APT_DIR/dpkg"
	touch "$APT_DIR/dpkg/status"
	"$cmd" -q -o Dir::Etc::SourceList="$APT_DIR/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$APT_DIR/lists" \
		-o Dir::State::status="$APT_DIR/dpkg/status" \
		-o Dir::Cache="$APT_DIR" -o Dir::Cache::archives="$APT_DIR/archives" \
		-o APT::Architecture=amd64 -o APT::Architectures::=amd64 \
		-o APT::Architectures::=arm64 "$@"
}

# The Debian archive the host's apt uses, for the Debian 13 root and the
# packages fetched into the cache: no mirror is written in the repository.
# apt itself reads the host's sources (one-line .list files and deb822
# .sources files); the main archive is the entry labelled "Debian" by its
# Release file (security and backports have other labels) or, if apt has
# no Release files yet, the one for the host's own codename.
# DEBIAN_MIRROR in the environment overrides it. The host's apt proxy, if
# any, is exported as http_proxy/https_proxy for debootstrap and the root's
# apt (the private apt-get below reads the host's apt.conf itself).
debian_mirror() {
	local codename uri proxy scheme from="DEBIAN_MIRROR in the environment"
	if [ -z "${DEBIAN_MIRROR:-}" ]; then
		from="the host's apt sources"
		codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
		uri=$(apt-get indextargets --format '$(TARGET_OF) $(SITE) $(LABEL)' 2>/dev/null |
			awk '$1 == "deb" && $3 == "Debian" { print $2; exit }')
		[ -n "$uri" ] || uri=$(apt-get indextargets --no-release-info \
			--format '$(TARGET_OF) $(SITE) $(RELEASE)' 2>/dev/null |
			awk -v c="$codename" '$1 == "deb" && $3 == c { print $2; exit }')
		case $uri in file:/[!/]*) uri=file://${uri#file:} ;; esac
		[ -n "$uri" ] || die "no Debian archive in the host's apt sources" \
			"(/etc/apt/sources.list, /etc/apt/sources.list.d/*.list, *.sources);" \
			"set DEBIAN_MIRROR=URL of a Debian mirror (the directory that holds dists/ and pool/)"
		DEBIAN_MIRROR=$uri
	fi
	DEBIAN_MIRROR=${DEBIAN_MIRROR%/}
	case $DEBIAN_MIRROR in
	http://* | https://* | ftp://* | file:///*) ;;
	*) die "Debian mirror '$DEBIAN_MIRROR' (from $from)" \
		"is not an http://, https://, ftp:// or file:/// URL debootstrap can use; set DEBIAN_MIRROR" ;;
	esac
	for scheme in http https; do
		proxy=
		eval "$(apt-config shell proxy "Acquire::$scheme::Proxy" 2>/dev/null)"
		case $proxy in "" | DIRECT | false) continue ;; esac
		[ -n "$(printenv "${scheme}_proxy")" ] || export "${scheme}_proxy=$proxy"
	done
	export DEBIAN_MIRROR
}

apt_private_update() {
	local stamp=$APT_DIR/updated sources
	debian_mirror
	sources="deb $DEBIAN_MIRROR $DEBIAN_ROOT_SUITE main
deb $DEBIAN_MIRROR $DEBIAN_ROOT_SUITE-backports main"
	# Indexes younger than a day, from the same mirror, are good enough to
	# find a pinned version.
	if [ -n "$(find "$stamp" -mmin -1440 2>/dev/null)" ] &&
		[ "$(cat "$APT_DIR/sources.list" 2>/dev/null)" = "$sources" ]; then
		return 0
	fi
	mkdir -p "$APT_DIR"
	echo "$sources" >"$APT_DIR/sources.list"
	apt_private apt-get update >"$APT_DIR/update.log" 2>&1 ||
		die "cannot read the Debian 13 archive index ($DEBIAN_MIRROR): see $APT_DIR/update.log"
	touch "$stamp"
}

# The newest of the versions on stdin (one per line) that belong to the
# upstream series $1: "7.3" takes 7.3.4-1~bpo13+1, not 7.30.1-1.
newest_of_series() {
	awk -v s="$1." 'index($0, s) == 1' | sort -V | tail -n 1
}

# The versions in "apt-cache madison" output on stdin, one per line.
madison_versions() {
	awk -F'|' '{gsub(/ /,"",$2); print $2}'
}

# Newest version of package $1 in the upstream series $2.
apt_newest_version() {
	apt_private_update
	apt_private apt-cache madison "$1" 2>/dev/null | madison_versions | newest_of_series "$2"
}

# Is the cached .deb $1 whole? apt-get download checked it against the
# archive's index and its sha256 was recorded next to it; a .deb cached
# before that is read through once (ar members, control, every data file).
deb_ok() {
	local deb=$1
	if [ -f "$deb.sha256" ]; then
		(cd "$(dirname "$deb")" && sha256sum -c --quiet --status "$(basename "$deb").sha256")
		return
	fi
	dpkg-deb --info "$deb" >/dev/null 2>&1 &&
		dpkg-deb --fsys-tarfile "$deb" 2>/dev/null | tar -t >/dev/null 2>&1 || return 1
	(cd "$(dirname "$deb")" && sha256sum "$(basename "$deb")" >"$(basename "$deb").sha256")
}

# Download package $1 (version $2, "pkg:arch" allowed) into the cache and
# print the path of the .deb. A damaged cached copy is downloaded again.
fetch_deb() {
	local pkg=$1 ver=$2 dir=$CACHE/debs tmp deb
	mkdir -p "$dir"
	deb=$(find "$dir" -maxdepth 1 -name "${pkg%%:*}_*${ver#*:}_*.deb" | head -n 1)
	if [ -n "$deb" ] && ! deb_ok "$deb"; then
		warn "cached $(basename "$deb") is damaged (sha256 or archive structure): downloading it again"
		rm -f "$deb" "$deb.sha256"
		deb=
	fi
	if [ -z "$deb" ]; then
		apt_private_update
		tmp=$(mktemp -d "$dir/.dl.XXXXXX")
		(cd "$tmp" && apt_private apt-get download "$pkg=$ver" >"$tmp/log" 2>&1) ||
			{ cat "$tmp/log" >&2; rm -rf "$tmp"; die "cannot download Debian package $pkg=$ver"; }
		deb=$(find "$tmp" -name '*.deb' | head -n 1)
		(cd "$tmp" && sha256sum "$(basename "$deb")" >"$(basename "$deb").sha256")
		mv "$deb" "$deb.sha256" "$dir/"
		rm -rf "$tmp"
		deb=$dir/$(basename "$deb")
	fi
	echo "$deb"
}
