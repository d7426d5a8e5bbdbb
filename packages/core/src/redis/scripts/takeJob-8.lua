#!lua
--[[
  Takes the next jobs of a BullMQ queue, up to a count, as BullMQ's `moveToActive` takes one
  for a plain queue, and says whether more jobs wait: the base marker (`ZADD marker 0 "0"`,
  which wakes a worker blocked on the queue) is added only then, where BullMQ adds it after
  every take. So a worker blocked on the marker is not woken for a take that finds nothing, nor
  for jobs another worker took together, and the taking worker, told none wait, blocks on the
  marker next (`redis/leanTake.ts`) instead of taking again.

  Each job moves from wait (else from the prioritized set, lowest score first) to the active
  list; its lock is set with the take's token (the first job) or the token followed by `/<n>`
  (the n-th job after it), for the lock duration (no lock for token "0", as BullMQ, and then
  one job only); the `active` event goes on the queue's event stream; the hash gets
  `processedOn` (and `pb`, the worker's name, when it has one) and one more `ats`; the reply
  carries the whole hash (read once, before the one write of those fields, and given back as
  written: BullMQ writes, then reads). So a take of one job runs 8 commands where BullMQ's runs
  9, and 9 (the marker's too) when more jobs wait; an empty queue, 5 where BullMQ's runs 6;
  each further job, 5. An empty queue is answered as BullMQ answers it (the priority counter
  deleted, the next delayed job's time). A queue that is not plain changes nothing and answers
  1, for BullMQ's own take: paused, with a global concurrency or a global rate limit (its
  meta), or with a delayed job due (BullMQ's take promotes it first). A worker with its own
  `limiter` never calls this.

  Input:
    KEYS[1] wait (LIST)
    KEYS[2] active (LIST)
    KEYS[3] prioritized (ZSET)
    KEYS[4] events (STREAM)
    KEYS[5] delayed (ZSET)
    KEYS[6] meta (HASH)
    KEYS[7] the priority counter (pc)
    KEYS[8] marker (ZSET)

    ARGV[1] the queue's key prefix (`<bull prefix>:<queue>:`)
    ARGV[2] now, ms (the job's `processedOn`)
    ARGV[3] the lock's token ("0": no lock, as BullMQ)
    ARGV[4] the lock's duration, ms
    ARGV[5] the worker's name ('': none)
    ARGV[6] how many jobs to take at most (1 when absent)
    ARGV[7] optional: a field of the job's hash a take claims (the coordinator queue's session
            of a job that names none)
    ARGV[8…] with ARGV[7]: one new random value per job taken, in order: a job whose hash lacks
            the field and whose data names no `"sessionId"` gets its value, written with
            `processedOn` (and given back in the hash); any other keeps what it has

  Output:
    1 not taken: the queue is not plain (BullMQ's take must run);
    else BullMQ's reply with two more elements: {the first job's hash as HGETALL gives it, job
    id, 0, delayUntil, more, further}, where `more` is 1 when jobs still wait (wait or
    prioritized), `delayUntil` is the next delayed job's time, ms, when none wait (else 0, as
    BullMQ), and `further` lists the jobs taken after the first, {hash, id, hash, id, ...};
    an empty queue: {0, 0, 0, delayUntil, 0, {}}
]]
local rcall = redis.call
if #ARGV < 5 or #ARGV == 7 then
  return redis.error_reply('takeJob: 5, 6, or 8 and more arguments expected, got ' .. #ARGV)
end
local claimField = ARGV[7]
local waitKey, activeKey, prioritizedKey = KEYS[1], KEYS[2], KEYS[3]
local now = ARGV[2]

local meta = rcall('HMGET', KEYS[6], 'paused', 'concurrency', 'max')
if meta[1] or meta[2] or meta[3] then return 1 end

-- The delayed job BullMQ's take would promote (its `promoteDelayedJobs` bound), else the
-- next one's time (its `getNextDelayedTimestamp`).
local delayUntil = 0
local nextDelayed = rcall('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
if nextDelayed[2] then
  local score = tonumber(nextDelayed[2])
  if score <= (now + 1) * 0x1000 - 1 then return 1 end
  delayUntil = score / 0x1000
end

-- The value of the claimed field to write for the n-th job taken (from 0), given its hash:
-- nil when it has one already, names a session of its own, or no value was given for it.
local function claimOf(hash, n)
  local proposed = claimField and ARGV[8 + n]
  if not proposed then return nil end
  for i = 1, #hash, 2 do
    if hash[i] == claimField then return nil end
    if hash[i] == 'data' and string.find(hash[i + 1], '"sessionId"', 1, true) then return nil end
  end
  return proposed
end

-- Moves the next waiting job to active, locked with `token`: its hash as written, and its
-- id; nil when none waits. `n`: how many jobs this take took before it.
local function takeOne(token, n)
  local jobId = rcall('RPOPLPUSH', waitKey, activeKey)
  -- BullMQ's markers in the wait list (deprecated since v5), skipped as BullMQ skips them.
  if jobId and string.sub(jobId, 1, 2) == '0:' then
    rcall('LREM', activeKey, 1, jobId)
    jobId = rcall('RPOPLPUSH', waitKey, activeKey)
  end
  if not jobId then
    local prioritized = rcall('ZPOPMIN', prioritizedKey)
    if #prioritized == 0 then return nil end
    jobId = prioritized[1]
    rcall('LPUSH', activeKey, jobId)
  end

  local jobKey = ARGV[1] .. jobId
  if token ~= '0' then rcall('SET', jobKey .. ':lock', token, 'PX', ARGV[4]) end
  rcall('XADD', KEYS[4], '*', 'event', 'active', 'jobId', jobId, 'prev', 'waiting')

  -- BullMQ's HMSET processedOn (pb), HINCRBY ats 1, then HGETALL, as one read and one write:
  -- the hash read is given back with the written fields as they now are.
  local hash = rcall('HGETALL', jobKey)
  local written = {processedOn = now, ats = 1}
  if ARGV[5] ~= '' then written.pb = ARGV[5] end
  local claimed = claimOf(hash, n)
  if claimed then written[claimField] = claimed end
  for i = 1, #hash, 2 do
    local field = hash[i]
    if field == 'ats' then written.ats = (tonumber(hash[i + 1]) or 0) + 1 end
  end
  local update = {}
  for field, value in pairs(written) do
    value = tostring(value)
    written[field] = value
    table.insert(update, field)
    table.insert(update, value)
  end
  rcall('HSET', jobKey, unpack(update))
  for i = 1, #hash, 2 do
    local value = written[hash[i]]
    if value then
      hash[i + 1] = value
      written[hash[i]] = nil
    end
  end
  for field, value in pairs(written) do
    table.insert(hash, field)
    table.insert(hash, value)
  end
  return hash, jobId
end

local token = ARGV[3]
local hash, jobId = takeOne(token, 0)
if not hash then
  rcall('DEL', KEYS[7])
  return {0, 0, 0, delayUntil, 0, {}}
end
local further = {}
local count = token == '0' and 1 or (tonumber(ARGV[6] or '1') or 1)
for n = 1, count - 1 do
  local nextHash, nextId = takeOne(token .. '/' .. n, n)
  if not nextHash then break end
  table.insert(further, nextHash)
  table.insert(further, nextId)
end

if rcall('EXISTS', waitKey, prioritizedKey) > 0 then
  rcall('ZADD', KEYS[8], 0, '0')
  return {hash, jobId, 0, 0, 1, further}
end
return {hash, jobId, 0, delayUntil, 0, further}
