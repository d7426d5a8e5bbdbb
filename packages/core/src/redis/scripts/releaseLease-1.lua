#!lua flags=allow-oom
--[[
  Releases a session's lease held by the caller (to hand the session over). Runs while Redis
  is out of memory (`allow-oom`): it only deletes.

  Input:
    KEYS[1] lease

    ARGV[1] token

  Output:
    1 released · 0 not ours
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
