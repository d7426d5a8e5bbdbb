#!lua flags=allow-oom
--[[
  Releases a session's lease when no work waits (no input, follow-up or open run). Runs while
  Redis is out of memory (`allow-oom`): it only deletes.

  Input:
    KEYS[1] lease
    KEYS[2] pendingInputs
    KEYS[3] pendingFollowUps
    KEYS[4] run

    ARGV[1] token

  Output:
    1 released · 0 work is pending · -1 not ours
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('EXISTS', KEYS[2], KEYS[3], KEYS[4]) > 0 then return 0 end
redis.call('DEL', KEYS[1])
return 1
