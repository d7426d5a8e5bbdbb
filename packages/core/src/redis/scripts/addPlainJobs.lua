#!lua
--[[
  Adds plain jobs to one queue exactly as BullMQ's `Queue.add` (its addStandardJob script)
  stores each, in fewer commands: jobs with their own id, no delay, priority, parent,
  deduplication, repeat or lifo (`plainJobs.ts` decides that before calling), on a queue with
  no global concurrency and no global rate limit. The adds a process issues to one queue in
  one pass come in one call (`plainJobBatches.ts`): the queue's meta is read once and the
  marker a blocked worker wakes on written once, however many jobs. Each job, in order, as if
  added alone: its hash gets the fields BullMQ writes (the opts re-encoded by cjson, as
  BullMQ's are), its id goes to wait or to paused, and the events stream gets `waiting`,
  trimmed as BullMQ trims it. Not written (nothing reads them for a job with its own id): the
  id counter's INCR and the `added` event. A job that exists (an earlier one of the same call
  included) is left as it is, with a `duplicated` event, as BullMQ does.

  Anything else the queue's meta says (a global concurrency or rate limit, or no
  `opts.maxLenEvents` yet) returns 0 before anything is written: the caller adds every job
  with BullMQ. Every job's opts are re-encoded before the first write, so a job the script
  cannot read fails the call with nothing written. What a BullMQ upgrade must re-check:
  docs/DECISIONS.md.

  Input (the number of keys first, 5 + the number of jobs):
    KEYS[1] wait (LIST)
    KEYS[2] paused (LIST)
    KEYS[3] meta (HASH)
    KEYS[4] events (STREAM)
    KEYS[5] marker (ZSET)
    KEYS[5 + i] job i (HASH), for i = 1 .. the number of jobs

    ARGV[5i - 4] job i's id
    ARGV[5i - 3] its name
    ARGV[5i - 2] its data (JSON)
    ARGV[5i - 1] its opts as BullMQ stores them (`Job.asJSON().opts`, JSON)
    ARGV[5i]     its timestamp (ms)

  Output:
    0 not plain: nothing written, add the jobs with BullMQ; else one reply a job, in order:
    1 added, 2 the job existed (untouched)
]]
local meta = redis.call('HMGET', KEYS[3], 'opts.maxLenEvents', 'paused', 'concurrency', 'max',
  'duration')
local maxEvents = meta[1]
if not maxEvents or meta[3] or meta[4] or meta[5] then return 0 end

local jobs = #KEYS - 5
local opts = {}
for i = 1, jobs do
  opts[i] = cjson.encode(cjson.decode(ARGV[5 * i - 1]))
end

local target = meta[2] and KEYS[2] or KEYS[1]
local replies = {}
local waiting = false
for i = 1, jobs do
  local id = ARGV[5 * i - 4]
  if redis.call('EXISTS', KEYS[5 + i]) == 1 then
    redis.call('XADD', KEYS[4], 'MAXLEN', '~', maxEvents, '*', 'event', 'duplicated', 'jobId', id)
    replies[i] = 2
  else
    redis.call('HSET', KEYS[5 + i], 'name', ARGV[5 * i - 3], 'data', ARGV[5 * i - 2], 'opts',
      opts[i], 'timestamp', ARGV[5 * i], 'delay', 0, 'priority', 0)
    redis.call('LPUSH', target, id)
    redis.call('XADD', KEYS[4], 'MAXLEN', '~', maxEvents, '*', 'event', 'waiting', 'jobId', id)
    replies[i] = 1
    waiting = true
  end
end
if waiting and not meta[2] then redis.call('ZADD', KEYS[5], 0, '0') end
return replies
