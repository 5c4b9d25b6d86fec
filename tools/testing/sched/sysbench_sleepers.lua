-- SPDX-License-Identifier: GPL-2.0
-- A sysbench workload whose threads behave like sysbench OLTP's against a
-- database server (which this project cannot run): each event uses run_us
-- of the thread's own CPU time, then waits sleep_us for the "server".
-- scripts/reproduce's interactivity-trace runs it with 128 threads on one
-- CPU, as section 5.2 of the ULE paper does.
local ffi = require("ffi")

ffi.cdef [[
struct sleepers_timespec { long tv_sec; long tv_nsec; };
int clock_gettime(int clk, struct sleepers_timespec *ts);
int usleep(unsigned int usec);
]]

local CLOCK_THREAD_CPUTIME_ID = 3

sysbench.cmdline.options = {
	run_us = {"CPU time each event uses, in microseconds", 1000},
	sleep_us = {"time each event then waits, in microseconds", 4000},
}

local ts = ffi.new("struct sleepers_timespec")

local function cpu_us()
	ffi.C.clock_gettime(CLOCK_THREAD_CPUTIME_ID, ts)
	return tonumber(ts.tv_sec) * 1e6 + tonumber(ts.tv_nsec) / 1e3
end

function event()
	local stop = cpu_us() + sysbench.opt.run_us
	while cpu_us() < stop do
	end
	ffi.C.usleep(sysbench.opt.sleep_us)
end
