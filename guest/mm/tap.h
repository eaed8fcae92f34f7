/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tap.h - the TAP results of the guest/mm programs: report() prints one
 * numbered case, and tap_failed says whether any failed (the exit status).
 */
#ifndef GUEST_MM_TAP_H
#define GUEST_MM_TAP_H

#include <stdio.h>

static int tap_nr;
static int tap_failed;

static void report(int ok, const char *what)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++tap_nr, what);
	if (!ok)
		tap_failed = 1;
}

#endif /* GUEST_MM_TAP_H */
