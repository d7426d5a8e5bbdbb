#!lua flags=allow-oom
--[[
  Forgets a batch's approvals (its requests, decisions and stored outcomes) for the session's
  holder only: a coordinator that lost the lease (stopped past it, then woken) must not delete
  what the next holder's batch recorded, or that holder would start a child run or ask for an
  approval a second time. The caller drops the returned calls from the cluster-wide index
  (another slot). Runs while Redis is out of memory (`allow-oom`): it only deletes.

  Input:
    KEYS[1] lease
    KEYS[2] approvals
    KEYS[3] decisions
    KEYS[4] parked results

    ARGV[1] token

  Output:
    the forgotten call keys, or -1 when the lease is not ours (nothing deleted)
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local callKeys = redis.call('HKEYS', KEYS[2])
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
return callKeys
