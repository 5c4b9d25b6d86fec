"""Constants of the sched_events record format (version 1).

The authoritative description is Documentation/scheduler/sched-events.rst;
this module only names the numbers so the rest of the tool can use words.
"""

MAGIC = b"SCHEDEVT"
TRACE_DAT_MAGIC = b"\x17\x08\x44tracing"   # trace-cmd's trace.dat (read via trace-cmd)
VERSION = 1
HEADER_SIZE = 64
RECORD_SIZE = 16
SECTION_HEADER_SIZE = 32

FLAG_FLIGHT = 1 << 0   # flight-recorder (overwrite) mode
FLAG_FROZEN = 1 << 1   # frozen by a sanity-checker violation

NODE_NONE = 0xFFFF     # node map entry of a CPU that is not possible
CPU_NONE = 0xFFFFFFFF  # CONSIDER result when no CPU was chosen
TS_MASK = (1 << 48) - 1

PAD, NR_RUNNING, LOAD, CONSIDER, CPUS, MIGRATE, WAKE_BUSY, VIOLATION = range(8)

TYPE_NAMES = {
    PAD: "PAD",
    NR_RUNNING: "NR_RUNNING",
    LOAD: "LOAD",
    CONSIDER: "CONSIDER",
    CPUS: "CPUS",
    MIGRATE: "MIGRATE",
    WAKE_BUSY: "WAKE_BUSY",
    VIOLATION: "VIOLATION",
}

# Types that become events of their own; PAD and CPUS only carry payload.
EVENT_TYPES = (NR_RUNNING, LOAD, CONSIDER, MIGRATE, WAKE_BUSY, VIOLATION)

KIND_NAMES = {
    0: "wake_idle_sibling",
    1: "fork_idlest_group",
    2: "lb_group_stats",
    3: "lb_busiest_queue",
    4: "wake_idle_longest",
    16: "ule_pickcpu",
    17: "ule_steal",
    18: "ule_balance",
    32: "bmq_select",
    33: "bmq_pull",
    48: "muqss_select",
    49: "muqss_look",
}

REASON_NAMES = {
    0: "other",
    1: "wakeup",
    2: "fork",
    3: "balance",
    4: "idle_balance",
    5: "active_balance",
}

PHASE_WATCH, PHASE_CONFIRM, PHASE_END = 0, 1, 2
PHASE_NAMES = {PHASE_WATCH: "watch", PHASE_CONFIRM: "confirm", PHASE_END: "end"}

# Event names of the trace system "sched_events" in trace-cmd output.
TEXT_EVENTS = {
    "rq_nr_running": NR_RUNNING,
    "rq_load": LOAD,
    "cpus_considered": CONSIDER,
    "task_migrate": MIGRATE,
    "wake_busy": WAKE_BUSY,
    "sanity_violation": VIOLATION,
}

# Events of the "sched" system that say which task ran where: kept from
# text for the Perfetto export (tasks.py), ignored by everything else.
TASK_EVENTS = ("sched_switch", "sched_wakeup", "sched_wakeup_new")


def type_name(t):
    return TYPE_NAMES.get(t, "type%d" % t)


def kind_class(k):
    """Which scheduling class a CONSIDER kind belongs to (reserved ranges)."""
    if 0 <= k < 16:
        return "cfs"
    if 16 <= k < 32:
        return "ule"
    if 32 <= k < 48:
        return "bmq"
    if 48 <= k < 64:
        return "muqss"
    return None
