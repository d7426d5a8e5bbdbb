--[[
  Takes a session's lease, or renews it when the caller holds it already. A free lease (the
  common case) costs one command: the SET that takes it.

  Input:
    KEYS[1] lease

    ARGV[1] token
    ARGV[2] lease ms

  Output:
    1 acquired (or already ours) · 0 held by another coordinator
]]
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
