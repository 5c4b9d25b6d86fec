"""Every topology preset boots the debug kernel, and the guest sees the
CPUs, nodes, SMT siblings, distances and scheduling domains it should.
Boot times are saved to build/boot-times.json for the README."""

import json
import re

import pytest

from schedlab import paths, vm

PROBE = r"""
echo "cpus $(nproc)"
for n in /sys/devices/system/node/node[0-9]*; do
	echo "node ${n##*node} $(cat $n/cpulist) dist $(cat $n/distance)"
done
echo "siblings $(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list)"
echo "domains $(cat /sys/kernel/debug/sched/domains/cpu0/domain*/name 2>/dev/null | tr '\n' ' ')"
"""

DOMAINS = {"1": [], "2": ["MC"], "2x4": ["MC", "NUMA"], "4x8": ["MC", "NUMA", "NUMA"],
           "8x8": ["MC", "NUMA", "NUMA"],
           "8x2": ["MC", "NUMA", "NUMA"], "smt": ["SMT", "MC"]}


@pytest.mark.parametrize("name", list(vm.PRESETS))
def test_preset_boots_with_its_shape(guest, name):
    topo = vm.PRESETS[name]
    res = guest(PROBE, topology=name, timeout=900)
    out = res.output
    assert res.status == 0, out
    assert f"cpus {topo.cpus}\n" in out
    nodes = re.findall(r"^node (\d+) (\S+) dist (.+)$", out, re.M)
    assert len(nodes) == topo.nodes, out
    want = {(s, d): v for s, d, v in topo.distances}
    for node, cpus, dist in nodes:
        n = int(node)
        assert vm.parse_cpulist(cpus) == topo.cpus_of_node(n)
        row = [int(x) for x in dist.split()]
        for other, value in enumerate(row):
            if other == n:
                assert value == 10
            elif want:
                assert value == want[tuple(sorted((n, other)))], (n, other, row)
    siblings = re.search(r"^siblings (\S+)", out, re.M).group(1)
    assert vm.parse_cpulist(siblings) == list(range(topo.threads))
    assert re.search(r"^domains (.*)$", out, re.M).group(1).split() == DOMAINS[name]
    times = paths.BUILD / "boot-times.json"
    record = json.loads(times.read_text()) if times.exists() else {}
    record[name] = round(res.seconds, 1)
    times.write_text(json.dumps(record, indent=1) + "\n")
