# The identity that authors and signs off the series: the person who
# prepares the submission. Source it after lib.sh; do not run it.
#
# It is KPKEYS_AUTHOR="Name <email>" if set, else user.name and user.email
# of this repository's git configuration (which includes ~/.gitconfig).
# Placeholders are refused: mail sent under them could not be answered and
# a Signed-off-by under them certifies nothing.
# shellcheck shell=bash

# The configured identity, "Name <email>", or nothing.
configured_identity() {
	local name email
	if [ -n "${KPKEYS_AUTHOR:-}" ]; then
		printf '%s\n' "$KPKEYS_AUTHOR"
		return 0
	fi
	name=$(git -C "$TOP" config user.name 2>/dev/null) || true
	email=$(git -C "$TOP" config user.email 2>/dev/null) || true
	[ -n "$name$email" ] && printf '%s <%s>\n' "$name" "$email"
	return 0
}

# Why "$1" cannot author the series; nothing (and status 0) if it can.
identity_problem() {
	local ident=$1 name email domain
	if ! [[ $ident =~ ^([^<>]*[^<>[:space:]])[[:space:]]+\<([^<>[:space:]]+@[^<>[:space:]]+)\>$ ]]; then
		echo "\"$ident\" is not of the form \"Name <user@domain>\""
		return 1
	fi
	name=${BASH_REMATCH[1]} email=${BASH_REMATCH[2]}
	domain=${email##*@}
	domain=${domain,,}
	case ${name,,} in
	kpkeys | "kpkeys developers")
		echo "\"$name\" is the workbench's placeholder name, not a person"
		return 1
		;;
	esac
	case $domain in
	localhost | localhost.* | localdomain | *.localdomain)
		echo "<$email> is a local address: nobody can reply to it"
		return 1
		;;
	example.org | *.example.org | example.com | *.example.com | example.net | *.example.net)
		echo "<$email> is a documentation example address (RFC 2606)"
		return 1
		;;
	esac
	return 0
}

# The identity to prepare the submission with, or die saying how to set one.
require_identity() {
	local ident why
	ident=$(configured_identity)
	[ -n "$ident" ] ||
		die "no identity to author and sign off the series: set KPKEYS_AUTHOR=\"Name <email>\" or git config user.name and user.email"
	why=$(identity_problem "$ident") ||
		die "refusing identity: $why; set KPKEYS_AUTHOR=\"Name <email>\" or git config user.name and user.email"
	printf '%s\n' "$ident"
}

# Print one line per commit of range $2 in repository $1 that is not
# authored by identity $3 or does not carry its Signed-off-by. Fails if any.
check_commit_identity() {
	local repo=$1 range=$2 ident=$3 c author subject bad=0
	while read -r c; do
		author=$(git -C "$repo" log -1 --format='%an <%ae>' "$c")
		subject=$(git -C "$repo" log -1 --format=%s "$c")
		if [ "$author" != "$ident" ]; then
			echo "${c:0:12} $subject: authored by $author, not $ident"
			bad=1
		fi
		if ! git -C "$repo" log -1 --format=%B "$c" | grep -qxF "Signed-off-by: $ident"; then
			echo "${c:0:12} $subject: no Signed-off-by: $ident"
			bad=1
		fi
	done < <(git -C "$repo" rev-list --reverse "$range")
	return "$bad"
}
