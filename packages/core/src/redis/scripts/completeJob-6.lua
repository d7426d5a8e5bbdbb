#!lua flags=allow-oom
--[[
  Completes an active BullMQ job as BullMQ's `moveToFinished` does for the plain case (no
  parent, no deduplication, no metrics, no next job taken), in fewer commands, and for a tool
  job records and announces its end in the same step (what recordToolEnd-1.lua does alone).
  The caller (redis/leanCompletion.ts) sends only such jobs here; BullMQ's own script
  finishes every other one.

  A job with a parent or a deduplication id (read from its hash, unless the caller read the
  whole job as it took it and says so with ARGV[13]) changes nothing and answers 1: BullMQ's
  script finishes it (it moves the parent on, frees the id).

  What a completed job looks like afterwards is BullMQ's layout: out of the active list, its
  lock and stalled mark gone, `atm` one more, `returnvalue` and `finishedOn` set and the id in
  the completed set (or, kept for no time, its keys deleted), and a `completed` entry on the
  queue's event stream, trimmed to the queue's length as BullMQ trims it. Unlike BullMQ's, it
  does not look for a `drained` moment (no `drained` event from here).

  Guarded (ARGV[14] not ''): it completes the job only if KEYS[6] holds the text whose SHA1
  is ARGV[14] (a request job's answer, stored by the run's close sent just before); else it
  changes nothing and answers 2.

  Pruning: a finish that looks (ARGV[7] not '') and finds old jobs to remove (the oldest kept
  past its age by more than ARGV[7] ms, or the set past its count by more than a hundredth)
  changes nothing of the job and answers 1: the caller then finishes it with BullMQ's own
  script, which prunes. So a pruning runs once in a while in one batch, not one job at each
  finish, and a finished job may be kept some ARGV[7] ms past its age (the caller looks about
  once a second).

  Out of memory does not refuse it (`allow-oom`), as BullMQ's finish is not refused: the
  finished marker is one small key, and a job removed as it completes must leave it.

  Input:
    KEYS[1] the queue's active list
    KEYS[2] the queue's stalled set
    KEYS[3] the queue's completed set
    KEYS[4] the queue's event stream
    KEYS[5] the job's hash
    KEYS[6] the job's finished marker (toolDone); the key ARGV[14] guards; else any key of
            the job's slot

    ARGV[1]  job id
    ARGV[2]  the lock's token
    ARGV[3]  now, ms
    ARGV[4]  the return value, JSON
    ARGV[5]  jobs kept by count: -1 every one, 0 none (removed as it completes), else the count
    ARGV[6]  jobs kept by age, seconds ('' none)
    ARGV[7]  how far past its age the oldest kept job may be before a finish prunes, ms ('':
             this finish does not look)
    ARGV[8]  the event stream's length (BullMQ's `opts.maxLenEvents`)
    ARGV[9]  the finished marker's value ('': none to write)
    ARGV[10] the marker's time to live, seconds
    ARGV[11] the channel the end is announced on ('': none)
    ARGV[12] the announcement
    ARGV[13] the job's attempts made after this one (`atm`), when the caller knows the job has
             no parent and no deduplication id ('': read them from its hash)
    ARGV[14] the SHA1 of the text KEYS[6] must hold for the job to complete ('': no guard)

  Output:
    0 completed; 2 not completed: KEYS[6] does not hold the guarded text; 1 not completed: old jobs to prune first, or a parent or deduplication id
    (BullMQ's script must finish it);
    -2 its lock is missing, -6 another holds it, -3 it is not active (BullMQ's codes)
]]
local rcall = redis.call
-- A caller of another version (fewer arguments) must change nothing: a script that fails
-- midway keeps the writes before the failure.
if #ARGV ~= 14 then
  return redis.error_reply('completeJob: 14 arguments expected, got ' .. #ARGV)
end
local jobId = ARGV[1]
local jobKey = KEYS[5]

if ARGV[14] ~= '' then
  local stored = rcall('GET', KEYS[6])
  if not stored or redis.sha1hex(stored) ~= ARGV[14] then return 2 end
end
if ARGV[9] ~= '' then rcall('SET', KEYS[6], ARGV[9], 'EX', ARGV[10]) end
if ARGV[11] ~= '' then rcall('PUBLISH', ARGV[11], ARGV[12]) end

local attemptsMade = ARGV[13]
if attemptsMade == '' then
  local job = rcall('HMGET', jobKey, 'parentKey', 'parent', 'deid', 'atm')
  if job[1] or job[2] or job[3] then return 1 end
  attemptsMade = (tonumber(job[4]) or 0) + 1
end

local keepCount = tonumber(ARGV[5])
if keepCount ~= 0 and ARGV[7] ~= '' then
  if keepCount > 0 and rcall('ZCARD', KEYS[3]) >= keepCount + math.ceil(keepCount / 100) then
    return 1
  end
  if ARGV[6] ~= '' then
    local oldest = rcall('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
    local cutoff = tonumber(ARGV[3]) - tonumber(ARGV[6]) * 1000 - tonumber(ARGV[7])
    if oldest[2] and tonumber(oldest[2]) < cutoff then return 1 end
  end
end

local lockKey = jobKey .. ':lock'
local lockToken = rcall('GET', lockKey)
if lockToken ~= ARGV[2] then
  if lockToken then return -6 end
  return -2
end
rcall('DEL', lockKey)
rcall('SREM', KEYS[2], jobId)
if rcall('LREM', KEYS[1], -1, jobId) < 1 then return -3 end

if keepCount == 0 then
  rcall('DEL', jobKey, jobKey .. ':logs', jobKey .. ':dependencies', jobKey .. ':processed',
    jobKey .. ':failed', jobKey .. ':unsuccessful')
else
  rcall('ZADD', KEYS[3], ARGV[3], jobId)
  rcall('HSET', jobKey, 'returnvalue', ARGV[4], 'finishedOn', ARGV[3], 'atm', attemptsMade)
end
rcall('XADD', KEYS[4], 'MAXLEN', '~', ARGV[8], '*', 'event', 'completed', 'jobId', jobId,
  'returnvalue', ARGV[4], 'prev', 'active')
return 0
