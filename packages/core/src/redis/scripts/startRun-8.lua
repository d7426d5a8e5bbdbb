--[[
  Opens the session's next run, or reports the open one. Waiting plain inputs open a run
  before follow-ups (they were meant to join the run that just ended). A follow-up newer than
  ARGV[2] does not open a run yet: an older input fetched by another coordinator may still
  be on its way, and must run first. A parked run (waiting for approvals) releases the lease.
  The run hash keeps `from`, where the run's messages begin in the transcript: a resumed run
  adds up its usage from there (`loop/runUsage.ts`). A new run of a session whose tree was
  aborted before the run opened (`abortOnStart`, left by abortChildRun-3.lua for a child run
  no coordinator had taken in) opens aborted, taking the mark: it ends before its first model
  call.

  Input:
    KEYS[1] lease
    KEYS[2] run
    KEYS[3] runInputs
    KEYS[4] inputs
    KEYS[5] pendingInputs
    KEYS[6] pendingFollowUps
    KEYS[7] messages
    KEYS[8] abortOnStart

    ARGV[1] token
    ARGV[2] newest follow-up order that may open a run now

  Output:
    {-1} not ours · {0} nothing to do · {2, runId, from, inputId...} a run is open (resume;
    `from`: the index of its first message in the transcript, '' for a run opened without it)
    · {1, runId, message, aborted} a new run, opened by input `runId` (`aborted`: 1 when it
    opened aborted, else 0) · {3, order} a follow-up waits
    · {4} the open run is parked: the lease is released in the same step
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {-1} end
if redis.call('HGET', KEYS[2], 'parked') == '1' then
  redis.call('DEL', KEYS[1])
  return {4}
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  local open = redis.call('LRANGE', KEYS[3], 0, -1)
  table.insert(open, 1, redis.call('HGET', KEYS[2], 'from') or '')
  table.insert(open, 1, redis.call('HGET', KEYS[2], 'runId'))
  table.insert(open, 1, 2)
  return open
end
for _ = 1, 1000 do
  local head = redis.call('ZPOPMIN', KEYS[5])
  if #head == 0 then
    local oldest = redis.call('ZRANGE', KEYS[6], 0, 0, 'WITHSCORES')
    if #oldest == 0 then return {0} end
    if tonumber(oldest[2]) > tonumber(ARGV[2]) then return {3, oldest[2]} end
    head = redis.call('ZPOPMIN', KEYS[6])
  end
  local id = head[1]
  local message = redis.call('HGET', KEYS[4], id)
  if message then
    local from = redis.call('RPUSH', KEYS[7], message) - 1
    redis.call('HSET', KEYS[2], 'runId', id, 'order', head[2], 'from', from)
    redis.call('DEL', KEYS[3])
    redis.call('RPUSH', KEYS[3], id)
    if redis.call('DEL', KEYS[8]) == 1 then
      redis.call('HSET', KEYS[2], 'aborted', '1')
      return {1, id, message, 1}
    end
    return {1, id, message, 0}
  end
end
return {0}
