#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inside the VM: gdx-bench in each mode, a few iterations, on rxe0/rxe1; its
# JSON parses and carries plausible figures. The full run is `make bench`.
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0 failed=0
check() { # name, command producing JSON, python assertion over j
	local out
	if out=$(timeout 120 "${@:3}" 2>&1) &&
		python3 -c "import json,sys; j=json.loads(sys.argv[1]); assert $2, j" "$out" 2>/dev/null; then
		echo "ok $1"
		passed=$((passed + 1))
	else
		echo "not ok $1: $out"
		failed=$((failed + 1))
	fi
}

check "gdx-bench bw sweep 4K-64K" \
	'len(j["results"]) == 5 and all(r["Gbps"] > 0 for r in j["results"])' \
	build/gdx-bench -b 4K -e 64K -n 30 -w 3 -j
check "gdx-bench rate, 8 B, depth 32" \
	'j["mode"] == "rate" and j["results"][0]["msg_rate"] > 0' \
	build/gdx-bench -m rate -t 32 -n 200 -w 10 -j
check "gdx-bench lat, 8 B" \
	'0 < j["results"][0]["min_us"] <= j["results"][0]["median_us"] <= j["results"][0]["p99_us"]' \
	build/gdx-bench -m lat -n 100 -w 10 -j
check "gdx-bench over a fused device" \
	'j["device"] == "rxe0+rxe2" and j["results"][0]["Gbps"] > 0' \
	env NCCL_GDX_RAILS=rxe0+rxe2,rxe1+rxe3 build/gdx-bench -d rxe0+rxe2 -D rxe1+rxe3 -s 1M -n 10 -w 2 -j
echo "# bench-smoke: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
