#!lua
-- Takes, keeps or gives back a session's place among a tenant's root runs at once
-- (`runsAtOnce`), shared by every coordinator. A place expires unless kept: a dead
-- coordinator's runs give theirs back on their own.
-- KEYS[1]  the tenant's running sessions (a ZSET in the tenant's own slot): session → expiry ms
-- ARGV[1]  what: "take" (a place if the session has one or one is free), "keep" (a place
--          whatever the cap: a run that runs counts), "release" (give the place back)
-- ARGV[2]  the session
-- ARGV[3]  the cap (runsAtOnce; read by "take" only)
-- ARGV[4]  a place's time to live, in ms
-- Returns 1 when the session holds a place now, else 0 (the cap is full, or released).
local running, what, session = KEYS[1], ARGV[1], ARGV[2]
local cap, ttl = tonumber(ARGV[3]), tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', running, '-inf', now)
if what == 'release' then
  redis.call('ZREM', running, session)
  return 0
end
if what == 'take' and not redis.call('ZSCORE', running, session)
  and redis.call('ZCARD', running) >= cap then
  return 0
end
redis.call('ZADD', running, now + ttl, session)
redis.call('PEXPIRE', running, ttl)
return 1
