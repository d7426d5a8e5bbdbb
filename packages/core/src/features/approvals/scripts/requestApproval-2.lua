#!lua
--[[
  Records that a call awaits approval, once (a resumed batch finds it known). The
  cluster-wide index of pending approvals is written by the caller, beside this script (it
  lives in another slot).

  Input:
    KEYS[1] lease
    KEYS[2] approvals

    ARGV[1] token
    ARGV[2] call key
    ARGV[3] request JSON

  Output:
    1 recorded now · 0 already known · -1 not ours
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3]) == 0 then return 0 end
return 1
