#!lua flags=allow-oom
--[[
  Renews a session's lease held by the caller. Runs while Redis is out of memory
  (`allow-oom`): it stores nothing new (the lease has its expiry already), and a lease that
  could not be renewed through the spell would hand the session over.

  Input:
    KEYS[1] lease

    ARGV[1] token
    ARGV[2] lease ms

  Output:
    1 renewed · 0 lost
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
