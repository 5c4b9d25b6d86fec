"""Topology presets and the QEMU arguments they produce (host only)."""

import pytest

from schedlab import vm


def hops(topo):
    return {(s, d): (v - 10) // 6 for s, d, v in topo.distances}


def test_presets_have_the_documented_shapes():
    shapes = {name: (t.cpus, t.nodes, t.threads) for name, t in vm.PRESETS.items()}
    assert shapes == {"1": (1, 1, 1), "2": (2, 1, 1), "2x4": (8, 2, 1),
                      "4x8": (32, 4, 1), "8x8": (64, 8, 1), "8x2": (16, 8, 1),
                      "smt": (8, 1, 2)}


@pytest.mark.parametrize("name", ["8x8", "8x2"])
def test_8x8_matches_figure_4_of_the_wasted_cores_paper(name):
    h = hops(vm.PRESETS[name])
    assert len(h) == 28 and set(h.values()) == {1, 2}
    assert {d for (s, d), n in h.items() if s == 0 and n == 1} == {1, 2, 4, 6}
    one_hop_3 = {s if d == 3 else d for (s, d), n in h.items() if 3 in (s, d) and n == 1}
    assert one_hop_3 == {1, 2, 4, 5, 7}
    assert h[(1, 2)] == 2


def test_qemu_arguments_place_each_socket_on_its_node():
    args = vm.PRESETS["4x8"].qemu_args()
    assert args[:2] == ["-smp", "32,sockets=4,cores=8,threads=1"]
    assert "cpu,node-id=3,socket-id=3" in args
    assert "dist,src=0,dst=2,val=22" in args
    assert vm.PRESETS["4x8"].cpus_of_node(1) == list(range(8, 16))


def test_qemu_modes_choose_threads_and_clock():
    topo = vm.topology("1x2")

    def accel(mode):
        cmd = vm.qemu_command("bzImage", topo, "", "/tmp", mode=mode)
        return cmd[1:cmd.index("-cpu")]

    assert accel("mttcg") == ["-accel", "tcg,thread=multi"]
    assert accel("tcg") == ["-accel", "tcg,thread=single"]
    assert accel("icount") == ["-accel", "tcg,thread=single", "-icount", "shift=auto,sleep=off"]


def test_guests_route_pci_interrupts_without_acpi_links():
    cmd = vm.qemu_command("bzImage", vm.topology("2x4"), "sched=ule", "/tmp")
    append = cmd[cmd.index("-append") + 1].split()
    assert "acpi=noirq" in append
    assert append[-1] == "sched=ule"


def test_custom_and_bad_topologies():
    t = vm.topology("2x2x2")
    assert (t.cpus, t.nodes, t.threads) == (8, 2, 2)
    for bad in ["", "3", "0x4", "2x", "big"]:
        with pytest.raises(ValueError, match="unknown topology"):
            vm.topology(bad)


def test_splat_detection_matches_trouble_not_benign_lines():
    console = "\n".join([
        "[    0.000] RCU lockdep checking is enabled.",
        "[    0.100] rcu: RCU CPU stall warnings timeout set to 21 (rcu_cpu_stall_timeout).",
        "[    1.000] hrtimer: interrupt took 45123456 ns",
        "[    2.000] WARNING: CPU: 3 PID: 1 at kernel/sched/core.c:100 foo+0x1/0x2",
        "[    3.000] BUG: sleeping function called from invalid context at mm/x.c:1",
        "[    4.000] INFO: task kworker/0:1:12 blocked for more than 60 seconds.",
        "[    5.000] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
        "[    6.000] ======================================================",
        "[    6.001] WARNING: possible circular locking dependency detected",
    ])
    splats = vm.find_splats(console)
    assert len(splats) == 5
    assert splats[0].startswith("WARNING: CPU: 3")


LOCK_STALL = """[   50.440760] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:
[   50.457537] rcu: \t1-....: (1418 ticks this GP) idle=05f4/1/0x4000000000000000
[   50.464845] rcu: \tTasks blocked on level-0 rcu_node (CPUs 0-7): P194
[   50.467468] \t(detected by 0, t=6503 jiffies, g=1465, q=719 ncpus=8)
[   50.500545] Sending NMI from CPU 0 to CPUs 1:
[   50.513007] NMI backtrace for cpu 1
[   50.513410] CPU: 1 PID: 157 Comm: hackbench Tainted: G                 N 6.1.192+ #1
[   50.513617] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996)
[   50.513726] RIP: 0010:queued_spin_lock_slowpath+0x207/0x2e0
"""

STARVED_READER = """[  105.184355] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:
[  105.184946] rcu: \tTasks blocked on level-0 rcu_node (CPUs 0-7): P120/2:b..l
[  105.189145] \t(detected by 4, t=6511 jiffies, g=18877, q=306 ncpus=8)
[  261.565326] NMI backtrace for cpu 7
[  261.566091] RIP: 0010:queued_spin_lock_slowpath+0x207/0x2e0
"""


def test_host_lock_stall_is_only_vcpus_spinning_for_a_lock():
    """The one splat a guest boot is retried for: every stall report names
    a stalled CPU, and every such CPU spins in queued_spin_lock_slowpath."""
    def stall(console):
        return vm.host_lock_stall(vm.find_splats(console), console)
    assert stall(LOCK_STALL)
    assert not stall(STARVED_READER)
    assert not stall(LOCK_STALL.replace("queued_spin_lock_slowpath", "sched_ule_tick"))
    assert not stall(LOCK_STALL + "[   51.0] WARNING: CPU: 3 PID: 1 at x.c:1 f+0x1/0x2\n")
    assert not stall("")


def test_parse_cpulist():
    assert vm.parse_cpulist("0-3,8\n") == [0, 1, 2, 3, 8]
    assert vm.parse_cpulist("5") == [5]
    assert vm.parse_cpulist("") == []


def test_only_overcommitted_guests_get_longer_watchdogs():
    assert vm.watchdog_args(vm.PRESETS["2x4"], host_cpus=2) == []
    assert vm.watchdog_args(vm.PRESETS["8x2"], host_cpus=2) == []
    args = vm.watchdog_args(vm.PRESETS["8x8"], host_cpus=2)
    assert "watchdog_thresh=60" in args and len(args) == 3
    assert vm.watchdog_args(vm.PRESETS["8x8"], host_cpus=64) == []


def test_a_boot_that_never_gets_ready_is_given_up_on_time():
    """A guest that never says it is ready (TCG losing a new vCPU's timer
    stalled one boot until the command's 1800 s ran out) ends at the boot
    limit; one that is ready, or that ends, does not."""
    import subprocess
    import threading
    import time

    def run(args, ready_after=None, limit=1.0):
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        ready = threading.Event()
        if ready_after is not None:
            threading.Timer(ready_after, ready.set).start()
        try:
            return vm._wait_ready(proc, ready, limit)
        finally:
            proc.kill()
            proc.communicate()

    start = time.time()
    with pytest.raises(vm.BootHangExpired):
        run(["sleep", "30"])
    assert time.time() - start < 5
    assert run(["sleep", "30"], ready_after=0.2) is None
    assert run(["echo", "ended"]) == "ended\n"
    assert vm.boot_limit(8) < 300 and vm.boot_limit(64) < 600
    assert vm.boot_limit(8) >= 10 * 6 and vm.boot_limit(64) >= 10 * 20
