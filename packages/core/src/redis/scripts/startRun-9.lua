#!lua
--[[
  Opens the session's next run, or reports the open one. Waiting plain inputs open a run
  before follow-ups (they were meant to join the run that just ended). A follow-up newer than
  ARGV[2] does not open a run yet: an older input fetched by another coordinator may still
  be on its way, and must run first. Nor does any input while a request sent before it
  (`submitted`, by `YiemClient.send`) is not recorded yet: a coordinator slower than the
  settle time (a loaded one) would otherwise see a later send open a run first, or take the
  older input into the newer one's run. A sent request not recorded by ARGV[3] is given up
  (its job failed or was refused before it was recorded). A parked run (waiting for approvals) releases the lease.
  The run hash keeps `from`, where the run's messages begin in the transcript: a resumed run
  adds up its usage from there (`loop/runUsage.ts`). A new run of a session whose tree was
  aborted before the run opened (`abortOnStart`, left by abortChildRun-3.lua for a child run
  no coordinator had taken in) opens aborted, taking the mark: it ends before its first model
  call. A new run opened by a plain input (not aborted) also takes in, as drainInputs-6 would
  on its first turn, the plain inputs waiting behind that one (submitted after it): the run's
  first turn drains nothing more from Redis.

  Input:
    KEYS[1] lease
    KEYS[2] run
    KEYS[3] runInputs
    KEYS[4] inputs
    KEYS[5] pendingInputs
    KEYS[6] pendingFollowUps
    KEYS[7] messages
    KEYS[8] abortOnStart
    KEYS[9] submitted (requests sent, not recorded yet: an id → its creation order)

    ARGV[1] token
    ARGV[2] newest follow-up order that may open a run now
    ARGV[3] oldest order of a sent request still worth waiting for (older ones are given up)

  Output:
    {-1} not ours · {0} nothing to do · {2, runId, from, order, length, inputId...} a run is
    open (resume; `from`: the index of its first message in the transcript, '' for a run opened
    without it; `order`: its first input's, '' when unknown; `length`: the transcript's, which
    the holder compares with its copy: a reply lost after this script opened the run, and the
    script sent again, says resume to a holder whose copy lacks the opening input) · {1, runId, message, aborted,
    order, id, message, ...} a new run, opened by input `runId` (`aborted`: 1 when it opened
    aborted, else 0; `order`: that input's, which drainInputs-6 compares later inputs with),
    then the ids and messages of the inputs it took in behind it · {3, order} a follow-up
    waits
    · {4} the open run is parked: the lease is released in the same step
    · {5} an older request is on its way: nothing opens yet
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {-1} end
local run = redis.call('HMGET', KEYS[2], 'parked', 'runId', 'from', 'order')
if run[1] == '1' then
  redis.call('DEL', KEYS[1])
  return {4}
end
if run[2] then
  local open = redis.call('LRANGE', KEYS[3], 0, -1)
  table.insert(open, 1, redis.call('LLEN', KEYS[7]))
  table.insert(open, 1, run[4] or '')
  table.insert(open, 1, run[3] or '')
  table.insert(open, 1, run[2])
  table.insert(open, 1, 2)
  return open
end
-- A request sent in the millisecond of `order` or before, not recorded yet (it may be older):
-- one given up (sent before ARGV[3]) is dropped when it is the one in the way, so the common
-- case (none sent, or none older) costs one read.
local function olderOnItsWay(order)
  local sameMs = math.floor(tonumber(order) / 1024) * 1024 + 1023
  local first = redis.call('ZRANGEBYSCORE', KEYS[9], '-inf', sameMs, 'LIMIT', 0, 1, 'WITHSCORES')
  if #first == 0 then return false end
  if tonumber(first[2]) >= tonumber(ARGV[3]) then return true end
  redis.call('ZREMRANGEBYSCORE', KEYS[9], '-inf', '(' .. ARGV[3])
  return #redis.call('ZRANGEBYSCORE', KEYS[9], '-inf', sameMs, 'LIMIT', 0, 1) > 0
end
-- Puts the waiting plain inputs of `popped` (member, score pairs) from pair index `from` back
-- in KEYS[5], as they were (per 1,000, within Lua's stack).
local function putBack(popped, from)
  for first = from, #popped, 2000 do
    local args = {}
    for i = first, math.min(first + 1999, #popped), 2 do
      args[#args + 1] = popped[i + 1]
      args[#args + 1] = popped[i]
    end
    if #args > 0 then redis.call('ZADD', KEYS[5], unpack(args)) end
  end
end
for _ = 1, 1000 do
  -- Every waiting plain input is taken at once, oldest first (all put back if an older request
  -- is on its way): the oldest opens the run, the ones behind it join it. A follow-up is looked
  -- at first, and taken only if it may open a run now.
  local source = KEYS[5]
  local popped = redis.call('ZPOPMIN', KEYS[5], 1000000)
  local head = popped
  if #popped == 0 then
    source = KEYS[6]
    head = redis.call('ZRANGE', KEYS[6], 0, 0, 'WITHSCORES')
    if #head == 0 then return {0} end
    if tonumber(head[2]) > tonumber(ARGV[2]) then return {3, head[2]} end
    if olderOnItsWay(head[2]) then return {5} end
    redis.call('ZREM', source, head[1])
  elseif olderOnItsWay(head[2]) then
    putBack(popped, 1)
    return {5}
  end
  local id = head[1]
  local message = redis.call('HGET', KEYS[4], id)
  if not message then
    -- An input whose message is gone opens nothing: the ones behind it wait, and the next one
    -- is looked at.
    if source == KEYS[5] then putBack(popped, 3) end
  else
    local from = redis.call('RPUSH', KEYS[7], message) - 1
    redis.call('HSET', KEYS[2], 'runId', id, 'order', head[2], 'from', from)
    redis.call('DEL', KEYS[3])
    redis.call('RPUSH', KEYS[3], id)
    if redis.call('DEL', KEYS[8]) == 1 then
      redis.call('HSET', KEYS[2], 'aborted', '1')
      if source == KEYS[5] then putBack(popped, 3) end
      return {1, id, message, 1, head[2]}
    end
    local opened = {1, id, message, 0, head[2]}
    if source == KEYS[5] then
      -- The first turn's drain (drainInputs-6), done here: no input is left behind this one
      -- (one of the very same order, which a drain would not take either, waits).
      for i = 3, #popped, 2 do
        local next = popped[i]
        if tonumber(popped[i + 1]) <= tonumber(head[2]) then
          redis.call('ZADD', KEYS[5], popped[i + 1], next)
        else
          local joined = redis.call('HGET', KEYS[4], next)
          if joined then
            redis.call('RPUSH', KEYS[7], joined)
            redis.call('RPUSH', KEYS[3], next)
            table.insert(opened, next)
            table.insert(opened, joined)
          end
        end
      end
    end
    return opened
  end
end
return {0}
