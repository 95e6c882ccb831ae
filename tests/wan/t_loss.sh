#!/usr/bin/env bash
# Random loss and duplication counts lie in their binomial 99 % intervals;
# Gilbert-Elliott loss has the configured mean rate and burst length; the
# same seed loses the same packets again.
. "$(dirname "$0")/lib.sh"
N=20000
NETBED_OPTS="--seed 42"

netbed_up 3 's1>s2:loss=5%,dup=2%' 's1>s3:ge_p=1%,ge_r=25%' || fail "bed did not start"
probe_server s2
probe_server s3

first=$(probe s1 s2 -c $N -i 200us)
read -r lo hi <<< "$(binomial99 $N 0.05)"
check "s1>s2 lost of $N at loss=5%" "$(echo "$first" | jq .lost)" "$lo" "$hi"
recv=$(echo "$first" | jq .received)
read -r lo hi <<< "$(binomial99 "$recv" 0.02)"
check "s1>s2 duplicated of $recv at dup=2%" "$(echo "$first" | jq .duplicates)" "$lo" "$hi"
check "s1>s2 dropped_loss counter = lost" "$(stat 's1>s2' dropped_loss)" "$(echo "$first" | jq .lost)" \
	"$(echo "$first" | jq .lost)"

out=$(probe s1 s3 -c $N -i 200us)
# Stationary loss p / (p + r) = 3.85 %, bursts of 1 / r = 4 on average;
# bursts make the count vary far more than a binomial one.
check "s1>s3 Gilbert-Elliott loss rate" "$(echo "$out" | jq ".lost / $N")" 0.027 0.050
check "s1>s3 mean loss burst" "$(echo "$out" | jq '.lost / .loss_runs')" 3.0 5.3

netbed_down
netbed_up 3 's1>s2:loss=5%,dup=2%' || fail "bed did not restart"
probe_server s2
again=$(probe s1 s2 -c $N -i 200us)
for f in lost loss_runs longest_loss_run duplicates; do
	[ "$(echo "$first" | jq .$f)" = "$(echo "$again" | jq .$f)" ] ||
		fail "seed 42 twice: $f $(echo "$first" | jq .$f) then $(echo "$again" | jq .$f)"
done
echo "measured: seed 42 twice gives the same losses and duplicates"
