"""The Lua scripts of apps/leaderboards/ranks.py (its docstring describes the keys): each call
is atomic in Redis, so a rank is read, or a member replaced, without another process's change
in between.

Each script comes in two builds (`scripts`), which differ only in where the epoch comes from:
on one Redis node, the epoch key (KEYS[5]) read in the script, as ever; on a Redis Cluster, the
argument the caller appends (its cached copy of the epoch key, which lives in another slot than
the board's keys, and so cannot be read here). A cluster build refuses to run on a set stamped
with a newer epoch than the caller's (`GAMIFY-EPOCH`): the caller reads the epoch again."""

# KEYS: 1 set, 2 hash, 3 pending, 4 build lock, 5 epoch (one node only); all but the epoch share
# a hash tag, so a slot.

EPOCH_FROM_KEY = """
local epoch = redis.call('GET', KEYS[5]) or '0'
"""

EPOCH_FROM_ARGUMENT = """
local epoch = table.remove(ARGV)
local stamp = redis.call('HGET', KEYS[2], '~')
if stamp and tonumber(stamp) > tonumber(epoch) then
  return redis.error_reply('GAMIFY-EPOCH the set is newer than the epoch given')
end
"""

READY = """
local function ready()
  return redis.call('EXISTS', KEYS[1]) == 1 and redis.call('HGET', KEYS[2], '~') == epoch
end
local function replace(z, h, user, m)
  local cur = redis.call('HGET', h, user)
  if cur then redis.call('ZREM', z, cur) end
  if m == '' then
    redis.call('HDEL', h, user)
  else
    redis.call('ZADD', z, 0, m)
    redis.call('HSET', h, user, m)
  end
end
-- Set a user's member ('' removes them): in the set when it is ready, and for the rebuild
-- when there is one under way or to come.
local function put(user, m)
  local is_ready = ready()
  if is_ready then replace(KEYS[1], KEYS[2], user, m) end
  local building = redis.call('GET', KEYS[4])
  if not is_ready or building then
    -- Recorded for the rebuild's epoch when that is newer (a cluster process whose copy of
    -- the epoch is a moment old), so that the rebuild replays it.
    local tag = epoch
    local rebuilding = building and tonumber(string.match(building, ' (%d+)$'))
    if rebuilding and rebuilding > tonumber(epoch) then tag = tostring(rebuilding) end
    redis.call('RPUSH', KEYS[3], tag .. ' ' .. user .. ' ' .. m)
    redis.call('EXPIRE', KEYS[3], 86400)
  end
end
"""

# ARGV: user, old member or '', new member or '', '1' when the old member is the truth (read
# under the user's lock: a member Redis holds that differs is set right first), '1' to move the
# user to the new member once read (the event's change, in the same call). The user's own
# member is left out: {ready, ahead of old, ahead of new, others, lowest other or ''}.
STANDING = (
    READY
    + """
if not ready() then return {0} end
local cur = redis.call('HGET', KEYS[2], ARGV[1])
if ARGV[4] == '1' and (cur or '') ~= ARGV[2] then
  put(ARGV[1], ARGV[2])
  cur = redis.call('HGET', KEYS[2], ARGV[1])
end
local function ahead(m)
  if m == '' then return 0 end
  local n = redis.call('ZLEXCOUNT', KEYS[1], '-', '(' .. m)
  if cur and cur < m then n = n - 1 end
  return n
end
local others = redis.call('ZCARD', KEYS[1]) - 1
if cur then others = others - 1 end
local tail = redis.call('ZRANGE', KEYS[1], -3, -2)
local lowest = ''
for i = #tail, 1, -1 do
  if tail[i] ~= '~' and tail[i] ~= cur then lowest = tail[i] break end
end
local found = {1, ahead(ARGV[2]), ahead(ARGV[3]), others, lowest}
if ARGV[5] == '1' then put(ARGV[1], ARGV[3]) end
return found
"""
)

# ARGV: user, member ('' removes the user), repeated.
SET = (
    READY
    + """
for i = 1, #ARGV, 2 do put(ARGV[i], ARGV[i + 1]) end
return 1
"""
)

# ARGV: offset, count -> members in rank order, or {'~not-ready'}.
PAGE = (
    READY
    + """
if not ready() then return {'~not-ready'} end
local page = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[1] + ARGV[2] - 1)
if page[#page] == '~' then page[#page] = nil end
return page
"""
)

# ARGV: the build lock's token, '1' to rebuild a ready set too, the lock's seconds -> 2 when the
# set is ready (and not to be rebuilt), 1 when the lock is taken, 0 when another process has it.
# Checked and taken at once: a process that found the set missing and rebuilt it after another
# had (its set ready and taking changes without recording them) lost the changes of
# transactions in flight, which its read of PostgreSQL did not see yet.
CLAIM = (
    READY
    + """
if ARGV[2] ~= '1' and ready() then return 2 end
if redis.call('SET', KEYS[4], ARGV[1] .. ' ' .. epoch, 'NX', 'EX', ARGV[3]) then return 1 end
return 0
"""
)

# The last two KEYS: the new set and hash, filled from PostgreSQL. ARGV: the build lock's token
# (the lock holds it and the epoch it was taken in). Replays the changes recorded since the build
# began, then puts the new set in place.
FINISH = (
    READY
    + """
local fresh_set, fresh_hash = KEYS[#KEYS - 1], KEYS[#KEYS]
if string.match(redis.call('GET', KEYS[4]) or '', '^%S+') ~= ARGV[1] then return 0 end
for _, op in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do
  local e, user, m = string.match(op, '^(%S+) (%S+) ?(%S*)$')
  if e == epoch then replace(fresh_set, fresh_hash, user, m) end
end
redis.call('ZADD', fresh_set, 0, '~')
redis.call('HSET', fresh_hash, '~', epoch)
redis.call('RENAME', fresh_set, KEYS[1])
redis.call('RENAME', fresh_hash, KEYS[2])
redis.call('PERSIST', KEYS[1])
redis.call('PERSIST', KEYS[2])
redis.call('DEL', KEYS[3], KEYS[4])
return 1
"""
)

# ARGV: user, k -> {'~not-ready'}; {} when the user has no member (not on the board); else
# {the user's 0-based place, the 0-based place of the first member shown, the members from k
# places above the user's to k below, in rank order}. ZRANK and ZRANGE by index: O(log n + k).
NEIGHBOURS = (
    READY
    + """
if not ready() then return {'~not-ready'} end
local m = redis.call('HGET', KEYS[2], ARGV[1])
if not m then return {} end
local place = redis.call('ZRANK', KEYS[1], m)
if not place then return {} end
local k = tonumber(ARGV[2])
local first = place - k
if first < 0 then first = 0 end
local window = redis.call('ZRANGE', KEYS[1], first, place + k)
if window[#window] == '~' then window[#window] = nil end
local found = {place, first}
for _, w in ipairs(window) do found[#found + 1] = w end
return found
"""
)

# A sub-board's members around a member of another sub-board (ranks.neighbours on a split
# board). ARGV: the member, k -> {'~not-ready'}, or {how many members sort before it, how many
# of those follow (up to k, in rank order), them, then up to k members after it}.
AROUND = (
    READY
    + """
if not ready() then return {'~not-ready'} end
local m = ARGV[1]
local k = tonumber(ARGV[2])
local found = {redis.call('ZLEXCOUNT', KEYS[1], '-', '(' .. m), 0}
if k > 0 then
  local before = redis.call('ZREVRANGEBYLEX', KEYS[1], '(' .. m, '-', 'LIMIT', 0, k)
  found[2] = #before
  for i = #before, 1, -1 do found[#found + 1] = before[i] end
  for _, w in ipairs(redis.call('ZRANGEBYLEX', KEYS[1], '(' .. m, '+', 'LIMIT', 0, k)) do
    if w ~= '~' then found[#found + 1] = w end
  end
end
return found
"""
)

# The epoch key alone (a Redis Cluster: ranks.py reads it every EPOCH_CHECK_SECONDS). ARGV: '1'
# to move the epoch on. A missing key (never set, or lost with a failed-over node) starts at the
# time in milliseconds, so that the epoch never goes back to one a set was stamped with.
EPOCH = """
local e = redis.call('GET', KEYS[1])
if not e then
  local t = redis.call('TIME')
  e = string.format('%d', t[1] * 1000 + math.floor(t[2] / 1000))
  redis.call('SET', KEYS[1], e)
elseif ARGV[1] == '1' then
  e = redis.call('INCR', KEYS[1])
end
return tostring(e)
"""

# The cluster's current epoch last seen (a Redis Cluster moves it on every failover). ARGV: the
# current one -> 1 when it moved on since, or when none was seen (the key lost with a node that
# failed over, or dropped with the sets): a failover may have gone unseen; else 0.
FAILOVERS = """
local seen = redis.call('GET', KEYS[1])
if seen and tonumber(ARGV[1]) <= tonumber(seen) then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
"""

_BOARD_SCRIPTS = ("STANDING", "SET", "PAGE", "CLAIM", "FINISH", "NEIGHBOURS", "AROUND")


def scripts(*, cluster: bool) -> dict[str, str]:
    """The board scripts by name (lower case), built for one node or for a cluster."""
    head = EPOCH_FROM_ARGUMENT if cluster else EPOCH_FROM_KEY
    return {name.lower(): head + globals()[name] for name in _BOARD_SCRIPTS}
