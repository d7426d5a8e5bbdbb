--[[
  Records a human (or timeout) decision on a call awaiting approval, at most once. When no
  undecided call remains, the run stops being parked (any coordinator may then resume it).
  Not fenced: any coordinator records decisions; only a lease holder runs the call.

  Input:
    KEYS[1] approvals
    KEYS[2] decisions
    KEYS[3] run

    ARGV[1] call key
    ARGV[2] decision JSON

  Output:
    {1} recorded, others wait · {2} recorded, the run may resume
    · {-1} the call does not wait for approval · {-2, decision JSON} decided already
]]
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return {-1} end
local existing = redis.call('HGET', KEYS[2], ARGV[1])
if existing then return {-2, existing} end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
if redis.call('HLEN', KEYS[2]) >= redis.call('HLEN', KEYS[1]) then
  redis.call('HDEL', KEYS[3], 'parked')
  return {2}
end
return {1}
