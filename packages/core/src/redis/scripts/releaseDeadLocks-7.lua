#!lua
--[[
  Hands out again the active jobs of one BullMQ queue whose lock is held by a dead life, as
  BullMQ's own stalled check (moveStalledJobsToWait) does with a job whose lock expired, only
  without waiting for the lock to run out: the lock is deleted (only while it still holds the
  dead life's token), the job leaves the active list, its stalled counter (`stc`) grows (past
  the worker's maxStalledCount it is marked to fail, `defa`), it goes back to wait (or paused,
  or waits behind the queue's global concurrency) with the queue's marker, and the `waiting`
  and `stalled` events are added. A lock token names its life after an `@` (`holderToken`).
  Yiem's queues have no repeatable jobs, which BullMQ's check treats apart.

  Input:
    KEYS[1] active (LIST)
    KEYS[2] wait (LIST)
    KEYS[3] stalled (SET)
    KEYS[4] meta (HASH)
    KEYS[5] paused (LIST)
    KEYS[6] marker (ZSET)
    KEYS[7] events (STREAM)

    ARGV[1] the queue's key prefix (`<bull prefix>:<queue>:`)
    ARGV[2] maxStalledCount
    ARGV[3..n] dead life ids

  Output:
    the ids of the jobs handed out again
]]
local dead = {}
for i = 3, #ARGV do dead[ARGV[i]] = true end
local prefix = ARGV[1]
local maxStalled = tonumber(ARGV[2])
local maxEvents = tonumber(redis.call('HGET', KEYS[4], 'opts.maxLenEvents') or '10000')

-- @include handBackJob

local released = {}
for _, jobId in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local lock = redis.call('GET', prefix .. jobId .. ':lock')
  local life = lock and string.match(lock, '@([%x%-]+)')
  if life and dead[life] and handBack(jobId, true) then table.insert(released, jobId) end
end
return released
