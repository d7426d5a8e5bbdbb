--[[
  Renews a session's lease held by the caller.

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
