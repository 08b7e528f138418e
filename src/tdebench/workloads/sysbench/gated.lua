-- tdebench: one of sysbench's bundled OLTP tests, run by threads that work only while a gate is open.
--
-- The interleaved schedule (docs/precision.md) keeps one sysbench process per config, step and block. Its threads
-- connect once and then wait; tdebench opens the gate for one slice at a time by writing the slice's number into
-- the gate file (0: closed). A transaction counts in a slice when it started and ended while that slice was open;
-- when a thread sees the gate change it writes the slice's latencies (microseconds) and ignored errors to its own
-- file: "<slice> <errors> <reconnects> <latency> <latency> ..." (reconnects: errors of a lost connection, which
-- sysbench reconnects). Environment: TDEBENCH_TEST (e.g. oltp_read_write),
-- TDEBENCH_GATE (the gate file, 8 bytes), TDEBENCH_OUT (a directory for the threads' files).

require(os.getenv("TDEBENCH_TEST"))

local ffi = require("ffi")
ffi.cdef [[
int open(const char *path, int flags);
void *mmap(void *addr, size_t length, int prot, int flags, int fd, long offset);
int usleep(unsigned int usec);
int getppid(void);
typedef struct { long tv_sec; long tv_nsec; } tdebench_timespec;
int clock_gettime(int clock, tdebench_timespec *tp);
]]

local CLOCK_MONOTONIC, PROT_READ, MAP_SHARED = 1, 1, 1
local inner_event, inner_init, inner_done, inner_restart =
   event, thread_init, thread_done, sysbench.hooks.before_restart_event
local gate, out, ts, parent
local current, errors, reconnects, latencies = 0, 0, 0, {}
local LOST = {[2013] = true, [2055] = true, [2006] = true, [2011] = true}  -- oltp_common's list

local function now_us()
   ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
   return tonumber(ts.tv_sec) * 1000000 + tonumber(ts.tv_nsec) / 1000
end

local function report()
   if current > 0 then
      out:write(current, " ", errors, " ", reconnects, " ", table.concat(latencies, " "), "\n")
      out:flush()
   end
   current, errors, reconnects, latencies = 0, 0, 0, {}
end

function thread_init()
   inner_init()
   ts = ffi.new("tdebench_timespec")
   local fd = ffi.C.open(os.getenv("TDEBENCH_GATE"), 0)
   assert(fd >= 0, "cannot open the gate file")
   gate = ffi.cast("volatile int64_t *", ffi.C.mmap(nil, 8, PROT_READ, MAP_SHARED, fd, 0))
   out = assert(io.open(os.getenv("TDEBENCH_OUT") .. "/thread" .. sysbench.tid .. ".txt", "w"))
   parent = ffi.C.getppid()
end

-- tdebench stops this process when it is done with it; if tdebench itself was killed, nobody will, and the threads
-- would wait at the closed gate for ever: they leave when their parent is gone
local function orphaned()
   return ffi.C.getppid() ~= parent
end

function event()
   local open = tonumber(gate[0])
   while open ~= current or open <= 0 do
      if open ~= current then
         report()
         current = math.max(open, 0)
      end
      if open <= 0 then
         ffi.C.usleep(1000)
         open = tonumber(gate[0])
         if open <= 0 and orphaned() then
            os.exit(1)
         end
      end
   end
   local started = now_us()
   inner_event()
   if tonumber(gate[0]) == current then
      latencies[#latencies + 1] = math.floor(now_us() - started + 0.5)
   end
end

function sysbench.hooks.before_restart_event(errdesc)
   errors = errors + 1
   if LOST[errdesc.sql_errno] then
      reconnects = reconnects + 1
   end
   if inner_restart then
      inner_restart(errdesc)
   end
end

function thread_done()
   report()
   out:close()
   inner_done()
end
