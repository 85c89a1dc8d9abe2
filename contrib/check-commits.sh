#!/bin/sh
# check-commits.sh: the rules of a commit message (HACKING.md, "Commits"), for a hook and for CI.
#   contrib/check-commits.sh --msg FILE   check the message in FILE (the commit-msg hook:
#                                         ln -s ../../contrib/check-commits.sh .git/hooks/commit-msg)
#   contrib/check-commits.sh [RANGE]      check every commit in RANGE (default BASE..HEAD, BASE
#                                         below), as CI does over what a submission adds
# The rules: a subject of at most 72 characters; "PREFIX: what it does now" where PREFIX is
# one or more names of the vocabulary below, joined by ", " (a path under one, "tests/guest",
# and a man page, "entropyd(8)", count as theirs); a blank line between subject and body; no
# merge commits. Each broken rule is printed with the commit and the subject; the exit status
# is 1 if there is any.
set -u

# The subsystems of src/ (HACKING.md's layers, by file-name prefix) and the parts of the tree.
VOCABULARY="util log kernel config priv est feed source block input net ctl daemon entropyd
entropyctl tests fuzz guest system bench docs man conf systemd contrib debian initramfs dracut
metrics completion build ci README HACKING NEWS"

# The vocabulary holds from this commit on; the subjects before it are history, kept as written.
BASE=008f06f60598d59ca7c76d2bd7df097a898e9e91

# known NAME: whether NAME (a path's first part, a man page's name) is in the vocabulary.
known() {
	_n=${1%%/*}
	_n=${_n%%(*}
	_n=${_n%.md}
	for _v in $VOCABULARY; do
		[ "$_n" = "$_v" ] && return 0
	done
	return 1
}

# subject_errors SUBJECT: prints what SUBJECT breaks, one line each; nothing when it keeps the rules.
subject_errors() {
	_s=$1
	[ "${#_s}" -le 72 ] || echo "subject is ${#_s} characters (at most 72)"
	case $_s in
	*": "*) ;;
	*)
		echo "subject has no \"PREFIX: \" (the vocabulary: contrib/check-commits.sh)"
		return
		;;
	esac
	_p=${_s%%: *}
	_rest=$_p
	while [ -n "$_rest" ]; do
		_one=${_rest%%, *}
		if [ "$_one" = "$_rest" ]; then _rest=; else _rest=${_rest#*, }; fi
		known "$_one" || echo "prefix \"$_one\" is not in the vocabulary (contrib/check-commits.sh)"
	done
	[ -n "${_s#*: }" ] || echo "subject says nothing after its prefix"
}

# message_errors FILE: the rules over a whole message (comments, as git strips them, ignored).
message_errors() {
	_subject=$(grep -v '^#' "$1" | sed -n 1p)
	subject_errors "$_subject"
	_second=$(grep -v '^#' "$1" | sed -n 2p)
	[ -z "$_second" ] || echo "no blank line between the subject and the body"
}

if [ "${1:-}" = --msg ] || { [ $# -eq 1 ] && [ -f "$1" ]; }; then
	[ "${1:-}" = --msg ] && shift
	errs=$(message_errors "$1")
	[ -z "$errs" ] && exit 0
	echo "$errs" | sed 's/^/commit-msg: /' >&2
	exit 1
fi

range=${1:-$BASE..HEAD}
if ! git rev-parse -q --verify "${range%%..*}^{commit}" > /dev/null; then
	echo "check-commits: SKIP: ${range%%..*} is not in this clone (a shallow clone?): nothing to compare with"
	exit 0
fi
bad=0
n=0
for c in $(git rev-list --merges "$range"); do
	echo "$(git log -1 --format='%h %s' "$c"): a merge commit (main keeps a straight history)"
	bad=$((bad + 1))
done
tmp=$(mktemp) || exit 2
trap 'rm -f "$tmp"' EXIT
for c in $(git rev-list --no-merges "$range"); do
	n=$((n + 1))
	git log -1 --format=%B "$c" > "$tmp"
	errs=$(message_errors "$tmp")
	[ -n "$errs" ] || continue
	echo "$errs" | while IFS= read -r e; do
		echo "$(git log -1 --format='%h %s' "$c" | cut -c1-80): $e"
	done
	bad=$((bad + 1))
done
echo "check-commits: $n commits in $range, $bad breaking the rules"
[ "$bad" -eq 0 ]
