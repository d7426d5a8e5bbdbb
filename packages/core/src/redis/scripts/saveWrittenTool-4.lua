#!lua
--[[
  Saves one version of a written tool atomically. The current hash is the last of the
  history: the same hash again changes nothing. Otherwise the hash is appended (the list's
  new length is the version), the definition is completed with that version (ARGV[3] is its
  JSON up to `"version":`), stored, its spec kept by hash, and the revision bumped.

  Input:
    KEYS[1] tools
    KEYS[2] history (of this name)
    KEYS[3] blobs
    KEYS[4] rev

    ARGV[1] name
    ARGV[2] content hash
    ARGV[3] definition JSON up to the version
    ARGV[4] canonical spec JSON

  Output:
    {0, current definition} unchanged · {1, new definition} saved
]]
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current and redis.call('LINDEX', KEYS[2], -1) == ARGV[2] then
  return {0, current}
end
local version = redis.call('RPUSH', KEYS[2], ARGV[2])
local text = ARGV[3] .. version .. '}'
redis.call('HSET', KEYS[1], ARGV[1], text)
redis.call('HSETNX', KEYS[3], ARGV[2], ARGV[4])
redis.call('INCR', KEYS[4])
return {1, text}
