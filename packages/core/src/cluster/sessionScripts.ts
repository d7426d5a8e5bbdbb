/**
 * The Lua scripts behind `SessionStore`. Every write to a session checks the caller's lease
 * token first (fencing): a coordinator that lost the session can never write to it again.
 * Inbox entries are `<kind><inputId>\n<message JSON>`, kind `i` (input) or `f` (follow-up),
 * so no script has to decode or re-encode JSON.
 */

/** KEYS: lease, inbox, run · ARGV: token, leaseMs → 1 acquired (or already ours), 0 held by another. */
export const ACQUIRE_LEASE = `
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

/** KEYS: lease · ARGV: token, leaseMs → 1 renewed, 0 lost. */
export const RENEW_LEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/** KEYS: lease, inbox, run · ARGV: token → 1 released, 0 work is pending, -1 not ours. */
export const RELEASE_IF_IDLE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('LLEN', KEYS[2]) > 0 or redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;

/** KEYS: lease · ARGV: token → 1 released, 0 not ours. Used to hand a session over. */
export const RELEASE_LEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;

/**
 * KEYS: lease, inbox, run, messages · ARGV: token
 * → {-1} not ours · {0} nothing to do · {2, runId, inputIds} a run is in progress (resume)
 * · {1, runId, message} a new run opened with the oldest inbox entry, its message appended.
 */
export const START_RUN = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {-1} end
if redis.call('EXISTS', KEYS[3]) == 1 then
  return {2, redis.call('HGET', KEYS[3], 'runId'), redis.call('HGET', KEYS[3], 'inputIds')}
end
local head = redis.call('LPOP', KEYS[2])
if not head then return {0} end
local nl = string.find(head, '\\n', 1, true)
local id = string.sub(head, 2, nl - 1)
local message = string.sub(head, nl + 1)
redis.call('RPUSH', KEYS[4], message)
redis.call('HSET', KEYS[3], 'runId', id, 'inputIds', id)
return {1, id, message}
`;

/**
 * KEYS: lease, inbox, run, messages · ARGV: token
 * Moves every plain input (not follow-ups) from the inbox into the transcript and the run.
 * → {-1} not ours · {1, message, message, ...}
 */
export const DRAIN_INPUTS = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {-1} end
local entries = redis.call('LRANGE', KEYS[2], 0, -1)
local moved = {1}
local kept = {}
local ids = redis.call('HGET', KEYS[3], 'inputIds') or ''
for _, entry in ipairs(entries) do
  if string.sub(entry, 1, 1) == 'i' then
    local nl = string.find(entry, '\\n', 1, true)
    local message = string.sub(entry, nl + 1)
    redis.call('RPUSH', KEYS[4], message)
    ids = ids .. ',' .. string.sub(entry, 2, nl - 1)
    table.insert(moved, message)
  else
    table.insert(kept, entry)
  end
end
if #moved > 1 then
  redis.call('DEL', KEYS[2])
  for _, entry in ipairs(kept) do redis.call('RPUSH', KEYS[2], entry) end
  redis.call('HSET', KEYS[3], 'inputIds', ids)
end
return moved
`;

/**
 * KEYS: lease, messages, running · ARGV: token, message JSON, tool call id or ''
 * Appends a message; a tool result also clears its call's "running here" mark.
 * → transcript length, or -1 not ours.
 */
export const APPEND_MESSAGE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if ARGV[3] ~= '' then redis.call('HDEL', KEYS[3], ARGV[3]) end
return redis.call('RPUSH', KEYS[2], ARGV[2])
`;

/**
 * KEYS: lease, run, seq, events stream, messages
 * ARGV: token, response JSON, response ttl s, response key prefix, responses channel,
 *       events channel, agentEnd event JSON (without seq and inputIds), stream max length,
 *       session ttl s
 * In one step: stores the run's response under every input id it answers, publishes the
 * run's `agentEnd` (numbered, with the input ids) on the bus, closes the run, announces the
 * ids on the responses channel, and sets the session's idle expiry. A watcher therefore
 * sees `agentEnd` exactly when the response is stored, even if the coordinator dies here.
 * → the comma-separated input ids, or -1 not ours.
 */
export const FINISH_RUN = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local ids = redis.call('HGET', KEYS[2], 'inputIds') or ''
for id in string.gmatch(ids, '[^,]+') do
  redis.call('SET', ARGV[4] .. id, ARGV[2], 'EX', ARGV[3])
end
local seq = redis.call('INCR', KEYS[3])
local quoted = {}
for id in string.gmatch(ids, '[^,]+') do table.insert(quoted, '"' .. id .. '"') end
local msg = '{"seq":' .. seq .. ',"inputIds":[' .. table.concat(quoted, ',') .. '],' .. string.sub(ARGV[7], 2)
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[8], seq .. '-1', 'e', msg)
redis.call('PUBLISH', ARGV[6], msg)
redis.call('DEL', KEYS[2])
redis.call('PUBLISH', ARGV[5], ids)
for i = 3, 5 do redis.call('EXPIRE', KEYS[i], ARGV[9]) end
return ids
`;

/**
 * KEYS: lease, messages, running · ARGV: token, then pairs of (message JSON, tool call id or '')
 * Appends several messages in order in one step (a batch's tool results).
 * → transcript length, or -1 not ours.
 */
export const APPEND_MESSAGES = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local length = 0
for i = 2, #ARGV, 2 do
  if ARGV[i + 1] ~= '' then redis.call('HDEL', KEYS[3], ARGV[i + 1]) end
  length = redis.call('RPUSH', KEYS[2], ARGV[i])
end
return length
`;
