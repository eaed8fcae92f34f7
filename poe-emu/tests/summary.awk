# summary.awk - the last lines of `make test`, from build/test.log: one
# line per suite with its own counts, then the sum, which CI reads.
# Each suite prints TAP ending with "N passed, N failed"; the Makefile
# follows it with "rc=STATUS suite=NAME". A suite that crashed before
# its summary shows 0 counts and its status. Exit status 1 on any failure.

/ passed, .* failed$/ {
	sp = $1
	sf = $3
	p += $1
	f += $3
}

/^rc=/ {
	name = $2
	sub(/^suite=/, "", name)
	printf "%s: %d passed, %d failed%s\n", name, sp, sf,
	       $1 == "rc=0" ? "" : " (" $1 ")"
	if ($1 != "rc=0")
		bad = 1
	sp = sf = 0
}

END {
	printf "%d passed, %d failed\n", p, f
	exit (f || bad)
}
