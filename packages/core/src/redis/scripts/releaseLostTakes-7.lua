#!lua
--[[
  Hands back the jobs a take lost with its reply: a take (BullMQ's moveToActive, or the take
  that follows finishing a job) that Redis ran while the connection went down, and that
  ioredis sent again after reconnecting, moved a job to active under the take's token that
  the worker never saw; the take sent again took another job, or none. Each active job whose
  lock is `token`, or `token` followed by `/<n>` (the further jobs of a take of several,
  takeJob-8.lua), but the jobs in `keep` (those the worker did get), goes back to wait, its
  take undone (handBackJob.lib.lua). Not a stall: no one ran it. A worker closing hands back
  the jobs it took ahead and never started the same way, one token each.

  Input:
    KEYS[1] active (LIST)
    KEYS[2] wait (LIST)
    KEYS[3] stalled (SET)
    KEYS[4] meta (HASH)
    KEYS[5] paused (LIST)
    KEYS[6] marker (ZSET)
    KEYS[7] events (STREAM)

    ARGV[1] the queue's key prefix (`<bull prefix>:<queue>:`)
    ARGV[2] the take's token
    ARGV[3..n] the ids of the jobs the worker got from the take (none: '' or absent)

  Output:
    the ids of the jobs handed back
]]
local prefix = ARGV[1]
local maxStalled = 0
local maxEvents = tonumber(redis.call('HGET', KEYS[4], 'opts.maxLenEvents') or '10000')

-- @include handBackJob

local token = ARGV[2]
local further = token .. '/'
local keep = {}
for i = 3, #ARGV do keep[ARGV[i]] = true end

-- Whether `lock` is the take's: its token, or its token and `/<n>`.
local function takenWith(lock)
  return lock == token or (lock and string.sub(lock, 1, #further) == further)
end

local released = {}
for _, jobId in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  if not keep[jobId] and takenWith(redis.call('GET', prefix .. jobId .. ':lock'))
    and handBack(jobId, false) then
    table.insert(released, jobId)
  end
end
return released
