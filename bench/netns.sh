# bench/netns.sh: sourced by bench/pcap.sh and bench/pcapsys.sh: two private network
# namespaces joined by a veth pair, no traffic leaving them, and where each side runs.
#   netns_up TAG NET [SOURCES]: $NA and $NB (named TAG followed by A or B and the PID), with
#     $VA in $NA as NET.0.1 and $VB in $NB as NET.0.2 (NET is two octets, e.g. 10.201),
#     SOURCES more addresses NET.1.1... on $VA, listed in $SRCS (comma-separated); no ARP,
#     no IPv6 chatter. $TX and $RX: "taskset -c 0" and "-c 1" with two CPUs or more (the
#     generator on one, veth running the receive path there in its context; the capturers on
#     the other), else empty.
#   netns_down: both namespaces removed (for the caller's exit trap).
netns_up() {
	local tag=$1 net=$2 n=${3:-0} i mac
	NA=${tag}A$$ NB=${tag}B$$ VA=${tag}A$$ VB=${tag}B$$ SRCS=
	ip netns add "$NA" && ip netns add "$NB" || exit 1
	ip link add "$VA" netns "$NA" type veth peer name "$VB" netns "$NB" || exit 1
	ip -n "$NA" addr add "$net.0.1/16" dev "$VA"
	for i in $(seq "$n"); do
		ip -n "$NA" addr add "$net.1.$i/16" dev "$VA"
		SRCS=$SRCS${SRCS:+,}$net.1.$i
	done
	ip -n "$NB" addr add "$net.0.2/16" dev "$VB"
	for ns in "$NA" "$NB"; do ip -n "$ns" link set lo up; done
	ip netns exec "$NA" sysctl -qw "net.ipv6.conf.$VA.disable_ipv6=1"
	ip netns exec "$NB" sysctl -qw "net.ipv6.conf.$VB.disable_ipv6=1"
	ip -n "$NA" link set "$VA" up
	ip -n "$NB" link set "$VB" up
	# No ARP or neighbour discovery in the middle of a measurement.
	mac=$(ip -n "$NB" -br link show "$VB" | awk '{print $3}')
	ip -n "$NA" neigh replace "$net.0.2" lladdr "$mac" dev "$VA" nud permanent
	RX= TX=
	if [ "$(nproc)" -ge 2 ] && command -v taskset > /dev/null; then
		RX="taskset -c 1" TX="taskset -c 0"
	fi
}

netns_down() {
	ip netns del "$NA" 2> /dev/null
	ip netns del "$NB" 2> /dev/null
}
