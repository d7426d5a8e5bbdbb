#!lua
--[[
  Stores the outcomes of the batch's finished calls (a resume reuses them), then, when a call
  still awaits a decision, parks the run and releases the lease in the same step.

  Input:
    KEYS[1] lease
    KEYS[2] run
    KEYS[3] approvals
    KEYS[4] decisions
    KEYS[5] parkedResults

    ARGV[1] token
    ARGV[2..] pairs of (call key, outcome JSON)

  Output:
    1 parked and released · 0 every call is decided already: resume now · -1 not ours
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[5], ARGV[i], ARGV[i + 1]) end
if redis.call('HLEN', KEYS[4]) >= redis.call('HLEN', KEYS[3]) then return 0 end
redis.call('HSET', KEYS[2], 'parked', '1')
redis.call('DEL', KEYS[1])
return 1
