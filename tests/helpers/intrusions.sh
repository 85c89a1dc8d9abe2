# intrusions.sh: what an exploit of the collector's parsers would try, made inside the real
# collector by tests/helpers/intrude; each attempt must fail. Sourced (POSIX sh: it runs in
# bash on the host, in dash under the unit and in busybox sh in an initramfs) by
# t_privsep.sh (started by hand), t_system.sh (under the unit) and the initramfs guest test.
#
#   INTRUDE=path/to/intrude
#   intrusions PID UID CONF SECRET SOCKET [BLOCK [IFINDEX]]
#       the list: the calls run as UID (the positive control); creating a file in /etc and
#       in /run; chmod of SECRET (a root file the collector must not read) and reading it;
#       writing CONF; writing core_pattern; reading /proc/1/environ; connecting to SOCKET
#       (a root-only unix socket); opening BLOCK read-write; a flood of perf events (2,000
#       asked of the privileged process: EAGAIN past the budget, or EACCES without the
#       tracepoint); and on its packet socket, if it captures: its filter locked (by the
#       kernel, SO_LOCK_FILTER: removed or replaced by no one, whatever a system call filter
#       lets through), promiscuous mode on lo, removing or replacing the filter, whole
#       frames beside the ring, a fanout group, passing the socket on, and a bind to every
#       interface, to lo and to interface IFINDEX (one the configuration does not select)
#   attempt PID WHAT ARGS...   one more: intrude PID ARGS must give an error
#   attempt_last PID TARGET [tgkill]
#                              prlimit64 (or a signal) on TARGET, a root process: must kill
#                              the collector (SIGSYS)
#   intrude_unknown            true (and prints why) where intrude cannot run: it knows
#                              x86-64, aarch64 and arm (tests/helpers/intrude_arch.h), and
#                              exits 77 elsewhere; the caller skips the list
#   attempt_stall PID MAIN N [TERM|COMMAND]
#                              N requests to the privileged process from inside the
#                              collector PID, whose replies it never reads (it is held
#                              stopped); with TERM, then SIGTERM to MAIN, the daemon's main
#                              process; with COMMAND, that (e.g. a systemctl stop), in the
#                              background. Either way MAIN must end within 30 s (each
#                              tenth of a second looked at), the collector killed
#   attempt_no_user ENTROPYD CONF USER
#                              a start where /etc/passwd has no USER (the collector's user):
#                              refused, exit 3, with how to create it
# Each prints "ok: WHAT: RESULT" or "BAD: WHAT: RESULT"; INTRUSIONS_BAD counts the BADs.
INTRUSIONS_BAD=0

intrude_unknown() {
	_r=$("$INTRUDE" 2>&1)
	[ $? -eq 77 ] || return 1
	echo "$_r (this machine is $(uname -m))"
}

attempt() {
	_pid=$1
	_what=$2
	shift 2
	_r=$("$INTRUDE" "$_pid" "$@" 2>&1)
	case $_r in
	-[0-9]*) echo "ok: $_what: $_r" ;;
	*)
		echo "BAD: $_what: $_r"
		INTRUSIONS_BAD=$((INTRUSIONS_BAD + 1))
		;;
	esac
}

intrusions() {
	_r=$("$INTRUDE" "$1" uid 2>&1)
	if [ "$_r" = "$2" ]; then
		echo "ok: the calls run in the collector, as uid $_r"
	else
		echo "BAD: a call in the collector gave uid $_r, not $2"
		INTRUSIONS_BAD=$((INTRUSIONS_BAD + 1))
	fi
	attempt "$1" "creating /etc/entropyd-intruder" open /etc/entropyd-intruder new
	attempt "$1" "creating /run/entropyd-intruder" open /run/entropyd-intruder new
	attempt "$1" "chmod of $4" chmod "$4" 0644
	attempt "$1" "reading $4" open "$4" r
	attempt "$1" "writing the configuration $3" open "$3" w
	attempt "$1" "writing core_pattern" open /proc/sys/kernel/core_pattern w
	attempt "$1" "reading /proc/1/environ" open /proc/1/environ r
	attempt "$1" "connecting to the root-only socket $5" connect "$5"
	if [ -n "${6:-}" ]; then
		attempt "$1" "opening $6 read-write" open "$6" rw
	fi
	attempt "$1" "a flood of perf events" perf 2000
	_r=$("$INTRUDE" "$1" locked 2> /dev/null) || return 0 # no packet socket: no capture
	if [ "$_r" = "locked 1" ]; then
		echo "ok: the capture's filter is locked by the kernel (SO_LOCK_FILTER): $_r"
	else
		echo "BAD: the capture's filter is not locked (SO_LOCK_FILTER): $_r"
		INTRUSIONS_BAD=$((INTRUSIONS_BAD + 1))
	fi
	attempt "$1" "promiscuous mode on lo (PACKET_ADD_MEMBERSHIP)" promisc 1
	attempt "$1" "removing the capture's filter" detach
	attempt "$1" "replacing the capture's filter" attach
	attempt "$1" "whole frames beside the ring (PACKET_COPY_THRESH)" copythresh
	attempt "$1" "joining a fanout group" fanout
	attempt "$1" "passing the packet socket on (SCM_RIGHTS)" sendfd
	attempt "$1" "binding the capture to every interface" bind 0
	attempt "$1" "binding the capture to lo" bind 1
	if [ -n "${7:-}" ]; then
		attempt "$1" "binding the capture to an interface not selected (ifindex $7)" bind "$7"
	fi
}

attempt_last() {
	_call=${3:-prlimit}
	_r=$("$INTRUDE" "$1" "$_call" "$2" 2>&1)
	case $_call in prlimit) _call=prlimit64 ;; esac
	case $_r in
	"killed by signal "*"(SIGSYS)") echo "ok: $_call on a root process ($2): $_r" ;;
	*)
		echo "BAD: $_call on a root process ($2): $_r"
		INTRUSIONS_BAD=$((INTRUSIONS_BAD + 1))
		;;
	esac
}

# Has process $1 ended (gone, or a zombie its parent has not waited for)?
ended() {
	[ ! -e "/proc/$1" ] || grep -q '^[0-9]* (.*) [ZX] ' "/proc/$1/stat" 2> /dev/null
}

attempt_stall() {
	_out=${TMPDIR:-/tmp}/entropyd-stall.$$
	: > "$_out"
	"$INTRUDE" "$1" stall "$3" > "$_out" 2>&1 &
	_stall=$!
	_i=0
	while ! grep -q '^sent\|^killed' "$_out" && [ "$_i" -lt 300 ]; do sleep 0.1; _i=$((_i + 1)); done
	_what="a collector that sends $3 request(s) and reads no reply"
	case ${4:-} in
	"") ;;
	TERM)
		kill -TERM "$2"
		_what="$_what, then SIGTERM"
		;;
	*)
		eval "$4" &
		_what="$_what, then $4"
		;;
	esac
	_i=0
	# The grace is 2 s, 30 s in a sanitizer build: a minute is the limit of the wait.
	while ! ended "$2" && [ "$_i" -lt 600 ]; do sleep 0.1; _i=$((_i + 1)); done
	ended "$2" || kill "$_stall" 2> /dev/null
	wait "$_stall" 2> /dev/null
	_r=$(tr '\n' ' ' < "$_out" | sed 's/ $//; s/ killed/, then killed/')
	rm -f "$_out"
	if ended "$2" && case $_r in *"killed by signal 9 (SIGKILL)"*) true ;; *) false ;; esac; then
		echo "ok: $_what: the daemon ended within $((_i / 10)).$((_i % 10)) s; the collector: $_r"
	else
		echo "BAD: $_what: the daemon $(ended "$2" && echo ended || echo "still runs after 60 s"); the collector: $_r"
		INTRUSIONS_BAD=$((INTRUSIONS_BAD + 1))
	fi
}

attempt_no_user() {
	_dir=$(mktemp -d "${TMPDIR:-/tmp}/entropyd-nouser.XXXXXX")
	grep -v "^$3:" /etc/passwd > "$_dir/passwd"
	chmod 644 "$_dir/passwd"
	# A mount namespace of its own, where /etc/passwd has no such user (the inner shell
	# expands its arguments).
	# shellcheck disable=SC2016
	_r=$(timeout 30 unshare -m sh -c 'mount --bind "$1" /etc/passwd && exec "$2" --foreground -f "$3"' sh \
		"$_dir/passwd" "$1" "$2" 2>&1)
	_rc=$?
	rm -rf "$_dir"
	case $_rc:$_r in
	"3:"*"not started: collector.user: no user $3 on this system"*"adduser --system"*)
		echo "ok: a start without the user $3: refused (exit 3): ${_r#*not started: }" ;;
	*)
		echo "BAD: a start without the user $3: exit $_rc: $_r"
		INTRUSIONS_BAD=$((INTRUSIONS_BAD + 1))
		;;
	esac
}
