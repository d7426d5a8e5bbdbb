--[[
  Hands an active job of a queue back to wait, as BullMQ's stalled check moves a job whose
  lock ran out: the lock is deleted, the job leaves the active list and goes back to wait (or
  paused, or waits behind the queue's global concurrency) with the queue's marker, and the
  `waiting` event is added. As a stall (`asStall`), its stalled counter (`stc`) grows (past
  `maxStalled` it is marked to fail, `defa`) and the `stalled` event is added; otherwise the
  take that started it is undone (`ats` back by one): no one ran it.
  Shared by releaseDeadLocks-7 and releaseLostTakes-7, whose KEYS[1..7] are the queue's active,
  wait, stalled, meta, paused, marker and events; the including script declares `prefix`
  (the queue's key prefix), `maxStalled` and `maxEvents` before the include line.
]]
local function targetOf()
  local attrs = redis.call('HMGET', KEYS[4], 'paused', 'concurrency')
  if attrs[1] then return KEYS[5], true end
  if attrs[2] and redis.call('LLEN', KEYS[1]) >= tonumber(attrs[2]) then return KEYS[2], true end
  return KEYS[2], false
end

local function handBack(jobId, asStall)
  local jobKey = prefix .. jobId
  redis.call('DEL', jobKey .. ':lock')
  redis.call('SREM', KEYS[3], jobId)
  if redis.call('LREM', KEYS[1], 1, jobId) == 0 then return false end
  if not asStall then
    redis.call('HINCRBY', jobKey, 'ats', -1)
  elseif redis.call('HINCRBY', jobKey, 'stc', 1) > maxStalled then
    redis.call('HSET', jobKey, 'defa', 'job stalled more than allowable limit')
  end
  local target, pausedOrMaxed = targetOf()
  redis.call('RPUSH', target, jobId)
  if not pausedOrMaxed then redis.call('ZADD', KEYS[6], 0, '0') end
  redis.call('XADD', KEYS[7], 'MAXLEN', '~', maxEvents, '*', 'event', 'waiting', 'jobId', jobId, 'prev', 'active')
  if asStall then
    redis.call('XADD', KEYS[7], 'MAXLEN', '~', maxEvents, '*', 'event', 'stalled', 'jobId', jobId)
  end
  return true
end
