#!lua
--[[
  Records an input once, however often its job is delivered. The input id (the job id) is the
  request's key in its session: the input first recorded under it is the only one, so an id
  that comes back with another input (its job was removed and added again) is refused. An
  input already answered returns its response; one already known (waiting, or in the open
  run) changes nothing. Waiting inputs are sorted sets ordered by `order`, so inputs fetched
  by different coordinators still run in the order they were submitted. A request's own
  budget (JSON) is recorded beside its input, with the same lifetime: the run that answers the
  input reads it (`state/inputBudgets.ts`), a resumed run too. Each input (re)writes the
  session's `known` mark, which `YiemClient.hasSession` reads in one step, and takes the id
  out of `submitted` (it is on its way no more). Not fenced: any coordinator records inputs.

  Input:
    KEYS[1] inputs
    KEYS[2] pendingInputs
    KEYS[3] pendingFollowUps
    KEYS[4] response (of this input)
    KEYS[5] inputDigests
    KEYS[6] inputBudgets
    KEYS[7] known (the session's existence mark)
    KEYS[8] submitted (requests sent, not recorded yet)

    ARGV[1] input id
    ARGV[2] kind: input | followUp
    ARGV[3] message JSON
    ARGV[4] order (the job's creation time, then arrival)
    ARGV[5] the input's digest
    ARGV[6] inputDigests ttl s
    ARGV[7] the request's budget JSON, or '' (none)
    ARGV[8] known ttl s

  Output:
    {3} the id was recorded with another input · {2, response JSON} answered ·
    {1} already known · {0} queued now
]]
redis.call('ZREM', KEYS[8], ARGV[1])
-- A new id records its digest in the same command that finds it has none.
if redis.call('HSETNX', KEYS[5], ARGV[1], ARGV[5]) == 1 then
  redis.call('EXPIRE', KEYS[5], ARGV[6])
elseif redis.call('HGET', KEYS[5], ARGV[1]) ~= ARGV[5] then
  return {3}
end
redis.call('SET', KEYS[7], '1', 'EX', ARGV[8])
local response = redis.call('GET', KEYS[4])
if response then return {2, response} end
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[3]) == 0 then return {1} end
if ARGV[7] ~= '' then
  redis.call('HSET', KEYS[6], ARGV[1], ARGV[7])
  redis.call('EXPIRE', KEYS[6], ARGV[6])
end
if ARGV[2] == 'followUp' then redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
else redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1]) end
return {0}
