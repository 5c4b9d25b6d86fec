"""scripts/reproduce's progress on stderr: which experiment and round
runs, the time since the start and an estimate of what is left."""

import sys
import threading
import time


def duration(seconds):
    seconds = max(0, int(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s"


class Progress:
    """Which experiment and round is running, the time since the start and
    an estimate of what is left, on stderr. `plan` lists (name, [seconds
    per boot estimated]); the estimate scales what is left by how the
    measured rounds compare with their estimates."""

    def __init__(self, plan, stream=None, clock=time.monotonic):
        self.plan = plan
        self.stream = stream
        self.clock = clock
        self.start = clock()
        self.index = -1
        self.boot = -1
        self.label = ""
        self.rounds = 1
        self.round = 0
        self.boot_start = self.start
        self.first_round_at = None
        self.spent_estimated = 0.0    # estimate of the boots finished so far
        self.spent = 0.0              # their measured time
        self.said_at = self.start
        self.lock = threading.Lock()

    def begin(self, index, boot, label, rounds):
        """Experiment `index`, its boot `boot`, `rounds` rounds to come."""
        self.index, self.boot, self.label, self.rounds, self.round = index, boot, label, rounds, 0
        self.boot_start = self.clock()
        self.first_round_at = None
        self.say()

    def at_round(self, rnd):
        """The guest is in round `rnd` (a result line of it appeared)."""
        if rnd != self.round:
            if self.first_round_at is None:
                self.first_round_at = self.clock()
            self.round = rnd
            self.say()

    def end_boot(self):
        self.spent_estimated += self.plan[self.index][1][self.boot]
        self.spent += self.clock() - self.boot_start

    def left(self):
        """Seconds left: the rest of this boot at the pace of its rounds
        since the first result (or its estimate before a round finished),
        plus the boots to come at their estimates scaled by how the
        finished boots compared with theirs."""
        pace = self.spent / self.spent_estimated if self.spent_estimated else 1.0
        est = self.plan[self.index][1][self.boot]
        done = max(0, self.round - 1)
        if done:
            per_round = (self.clock() - self.first_round_at) / done
            current = per_round * (self.rounds - done)
        else:
            current = max(0.0, est * pace - (self.clock() - self.boot_start))
        later = sum(self.plan[self.index][1][self.boot + 1:])
        later += sum(sum(p[1]) for p in self.plan[self.index + 1:])
        return current + later * pace

    def heartbeat(self, every=60.0, stop=None):
        """Say where the run is at least every `every` seconds, from a
        thread: a round of smt-spread or wasted-cores takes minutes, and a
        line that never changes looks like a hang."""
        stop = stop or threading.Event()
        while not stop.wait(min(every, 5.0)):
            if self.index >= 0 and self.clock() - self.said_at >= every:
                self.say()

    def say(self):
        with self.lock:
            self._say()

    def _say(self):
        self.said_at = self.clock()
        name = self.plan[self.index][0]
        where = f" {self.label}" if self.label else ""
        rnd = f" round {self.round}/{self.rounds}" if self.round else " booting"
        stream = self.stream or sys.stderr
        stream.write(f"reproduce: [{self.index + 1}/{len(self.plan)}] {name}{where}{rnd}, "
                     f"{duration(self.clock() - self.start)} elapsed, "
                     f"about {duration(self.left())} left\n")
        stream.flush()
