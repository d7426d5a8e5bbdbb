#!lua
--[[
  Adds a plain job exactly as BullMQ's `Queue.add` (its addStandardJob script) stores it, in
  fewer commands: a job with its own id, no delay, priority, parent, deduplication, repeat or
  lifo (`plainJobs.ts` decides that before calling), on a queue with no global concurrency
  and no global rate limit. The job hash gets the fields BullMQ writes (the opts re-encoded by
  cjson, as BullMQ's are), its id goes to wait (with the marker a blocked worker wakes on) or
  to paused, and the events stream gets `waiting`, trimmed as BullMQ trims it. Not written
  (nothing reads them for a job with its own id): the id counter's INCR and the `added` event.
  A job that exists is left as it is, with a `duplicated` event, as BullMQ does.

  Anything else the queue's meta says (a global concurrency or rate limit, or no
  `opts.maxLenEvents` yet) returns 0 before anything is written: the caller adds the job with
  BullMQ. What a BullMQ upgrade must re-check: docs/DECISIONS.md.

  Input:
    KEYS[1] wait (LIST)
    KEYS[2] paused (LIST)
    KEYS[3] meta (HASH)
    KEYS[4] events (STREAM)
    KEYS[5] marker (ZSET)
    KEYS[6] the job (HASH)

    ARGV[1] the job id
    ARGV[2] the job's name
    ARGV[3] its data (JSON)
    ARGV[4] its opts as BullMQ stores them (`Job.asJSON().opts`, JSON)
    ARGV[5] its timestamp (ms)

  Output:
    1 added, 2 the job existed (untouched), 0 not plain: nothing written, add it with BullMQ
]]
local meta = redis.call('HMGET', KEYS[3], 'opts.maxLenEvents', 'paused', 'concurrency', 'max',
  'duration')
local maxEvents = meta[1]
if not maxEvents or meta[3] or meta[4] or meta[5] then return 0 end

if redis.call('EXISTS', KEYS[6]) == 1 then
  redis.call('XADD', KEYS[4], 'MAXLEN', '~', maxEvents, '*', 'event', 'duplicated', 'jobId',
    ARGV[1])
  return 2
end

redis.call('HSET', KEYS[6], 'name', ARGV[2], 'data', ARGV[3], 'opts',
  cjson.encode(cjson.decode(ARGV[4])), 'timestamp', ARGV[5], 'delay', 0, 'priority', 0)
if meta[2] then
  redis.call('LPUSH', KEYS[2], ARGV[1])
else
  redis.call('LPUSH', KEYS[1], ARGV[1])
  redis.call('ZADD', KEYS[5], 0, '0')
end
redis.call('XADD', KEYS[4], 'MAXLEN', '~', maxEvents, '*', 'event', 'waiting', 'jobId', ARGV[1])
return 1
