#!lua
--[[
  Marks a tool call as running in its holder's process, only while the caller holds the
  session's lease: a holder that lost the lease (it stalled through a Redis outage or a
  SIGSTOP while another coordinator took the session over) must not start an in-process
  call the new holder may be running too. The new holder reads the marks after taking the
  lease, so a mark either lands before it takes over (and the call is reported interrupted
  instead of run again) or is refused (and this holder does not run the call).

  Input:
    KEYS[1] lease
    KEYS[2] running

    ARGV[1] token
    ARGV[2] tool call id
    ARGV[3] now (epoch ms)

  Output:
    1 marked · 0 not ours (nothing written)
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
