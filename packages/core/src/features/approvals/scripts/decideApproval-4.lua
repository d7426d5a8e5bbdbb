#!lua
--[[
  Records a human (or timeout) decision on a call awaiting approval, at most once, and
  publishes its `toolApprovalDecided` event (numbered, as publishEvent-1 does) in the same
  step, so watchers see each decision exactly once. When no undecided call remains, the run
  stops being parked (any coordinator may then resume it). Not fenced: any coordinator records
  decisions; only a lease holder runs the call.

  Input:
    KEYS[1] approvals
    KEYS[2] decisions
    KEYS[3] run
    KEYS[4] events stream

    ARGV[1] call key
    ARGV[2] decision JSON
    ARGV[3] the event JSON (without seq), or '' for none
    ARGV[4] events channel
    ARGV[5] stream max length
    ARGV[6] stream max bytes (see appendEvent.lib.lua)

  Output:
    {1} recorded, others wait · {2} recorded, the run may resume
    · {-1} the call does not wait for approval · {-2, decision JSON} decided already
]]
-- @include appendEvent
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return {-1} end
local existing = redis.call('HGET', KEYS[2], ARGV[1])
if existing then return {-2, existing} end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
if ARGV[3] ~= '' then appendEvent(KEYS[4], ARGV[4], ARGV[3], ARGV[5], ARGV[6]) end
if redis.call('HLEN', KEYS[2]) >= redis.call('HLEN', KEYS[1]) then
  redis.call('HDEL', KEYS[3], 'parked')
  return {2}
end
return {1}
