--[[
  Records an input once, however often its job is delivered. An input already answered
  returns its response; one already known (waiting, or in the open run) changes nothing.
  Waiting inputs are sorted sets ordered by `order`, so inputs fetched by different
  coordinators still run in the order they were submitted. Not fenced: any coordinator
  records inputs.

  Input:
    KEYS[1] inputs
    KEYS[2] pendingInputs
    KEYS[3] pendingFollowUps
    KEYS[4] response (of this input)

    ARGV[1] input id
    ARGV[2] kind: input | followUp
    ARGV[3] message JSON
    ARGV[4] order (the job's creation time, then arrival)

  Output:
    {2, response JSON} answered · {1} already known · {0} queued now
]]
local response = redis.call('GET', KEYS[4])
if response then return {2, response} end
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[3]) == 0 then return {1} end
if ARGV[2] == 'followUp' then redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
else redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1]) end
return {0}
