/// The Lua scripts of `RedisOrderStore`. Each runs atomically in Redis (no other command interleaves), which is
/// what makes an apply from two nodes to the same order safe: the write token compare-and-set fails for the
/// second one, which re-validates against the new snapshot.
///
/// Called with `EVALSHA` (the SHA1 Redis returned from `SCRIPT LOAD`); a `NOSCRIPT` reply (a restarted or
/// `SCRIPT FLUSH`ed server) falls back to `EVAL` with the source, which also caches it again.
enum RedisScripts {
    /// One validated change: epoch check, idempotency check, write-token compare-and-set, history append with
    /// retention by count (dropping the idempotency keys of trimmed records), snapshot update, index updates
    /// and `PUBLISH` to the route's channel. On a cluster every key is in the order's slot (see `RedisKeys`).
    ///
    /// KEYS: order hash, history stream, idempotency hash, epoch, orders set, terminal set, aging set.
    /// ARGV: epoch, expected token ('' = the order must not exist), new token, idempotency key, offset, maxlen,
    /// channel ('' = no publish), message, member, terminal ('1'/'0'), updated-at, previous updated-at
    /// ('' for a new order), N, then N snapshot field/value items, then the record's field/value items.
    ///
    /// Returns `{'OK'}`, `{'DUP', entry, snapshot-hash}`, `{'STALE', snapshot-hash}` or `{'EPOCH'}`.
    static let apply = """
        local epoch = redis.call('GET', KEYS[4])
        if epoch ~= ARGV[1] then return {'EPOCH'} end
        local idem = ARGV[4]
        if idem ~= '' then
          local at = redis.call('HGET', KEYS[3], idem)
          if at then
            local found = redis.call('XRANGE', KEYS[2], at .. '-0', at .. '-0')
            if #found > 0 then
              -- Rewrite the token unchanged: a write, so a WAIT after this replay covers the replayed record.
              redis.call('HSET', KEYS[1], 'w', redis.call('HGET', KEYS[1], 'w') or '')
              return {'DUP', found[1], redis.call('HGETALL', KEYS[1])}
            end
          end
        end
        local token = redis.call('HGET', KEYS[1], 'w') or ''
        if token ~= ARGV[2] then return {'STALE', redis.call('HGETALL', KEYS[1])} end
        local maxlen = tonumber(ARGV[6])
        local length = redis.call('XLEN', KEYS[2])
        if length >= maxlen then
          local old = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', length - maxlen + 1)
          for _, entry in ipairs(old) do
            local fields = entry[2]
            for i = 1, #fields, 2 do
              if fields[i] == 'key' and redis.call('HGET', KEYS[3], fields[i + 1]) == string.match(entry[1], '^%d+') then
                redis.call('HDEL', KEYS[3], fields[i + 1])
              end
            end
          end
        end
        local n = tonumber(ARGV[13])
        local record = {}
        for i = 14 + n, #ARGV do record[#record + 1] = ARGV[i] end
        redis.call('XADD', KEYS[2], 'MAXLEN', maxlen, ARGV[5] .. '-0', unpack(record))
        if idem ~= '' then redis.call('HSET', KEYS[3], idem, ARGV[5]) end
        local snapshot = {}
        for i = 14, 13 + n do snapshot[#snapshot + 1] = ARGV[i] end
        redis.call('HSET', KEYS[1], 'w', ARGV[3], unpack(snapshot))
        if ARGV[12] == '' then
          redis.call('ZADD', KEYS[5], 0, ARGV[9])
        else
          redis.call('ZADD', KEYS[7], 'NX', ARGV[12], ARGV[9])
        end
        if ARGV[10] == '1' then
          redis.call('ZADD', KEYS[6], ARGV[11], ARGV[9])
        else
          redis.call('ZREM', KEYS[6], ARGV[9])
        end
        if ARGV[7] ~= '' then redis.call('PUBLISH', ARGV[7], ARGV[8]) end
        return {'OK'}
        """

    /// `apply` for a Redis Cluster: the record goes to the route's shard channel (`SPUBLISH`), which is in the
    /// order's slot like every key the script touches.
    static let applySharded = apply.replacing("redis.call('PUBLISH',", with: "redis.call('SPUBLISH',")

    /// Looks up an idempotency key (when a change no longer validates, it may be the retry of one that was
    /// stored): the epoch check and the replay branch of `apply`, alone.
    ///
    /// KEYS: order hash, history stream, idempotency hash, epoch. ARGV: epoch, idempotency key.
    /// Returns `{'DUP', entry, snapshot-hash}`, `{'NONE'}` or `{'EPOCH'}`.
    static let replay = """
        if redis.call('GET', KEYS[4]) ~= ARGV[1] then return {'EPOCH'} end
        local at = redis.call('HGET', KEYS[3], ARGV[2])
        if not at then return {'NONE'} end
        local found = redis.call('XRANGE', KEYS[2], at .. '-0', at .. '-0')
        if #found == 0 then return {'NONE'} end
        redis.call('HSET', KEYS[1], 'w', redis.call('HGET', KEYS[1], 'w') or '')
        return {'DUP', found[1], redis.call('HGETALL', KEYS[1])}
        """

    /// Writes an imported order (replacing what is stored), guarded by the same epoch check and write token.
    ///
    /// KEYS: as `apply`. ARGV: epoch, expected token, new token, member, terminal, updated-at, aging-from ('' =
    /// none), N, N snapshot items, then per record: offset, M, M field/value items.
    /// Returns `{'OK'}`, `{'STALE'}` or `{'EPOCH'}`.
    static let importOrder = """
        if redis.call('GET', KEYS[4]) ~= ARGV[1] then return {'EPOCH'} end
        local token = redis.call('HGET', KEYS[1], 'w') or ''
        if token ~= ARGV[2] then return {'STALE'} end
        redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
        local n = tonumber(ARGV[8])
        local snapshot = {}
        for i = 9, 8 + n do snapshot[#snapshot + 1] = ARGV[i] end
        redis.call('HSET', KEYS[1], 'w', ARGV[3], unpack(snapshot))
        local i = 9 + n
        while i <= #ARGV do
          local offset = ARGV[i]
          local count = tonumber(ARGV[i + 1])
          local fields = {}
          for j = i + 2, i + 1 + count do fields[#fields + 1] = ARGV[j] end
          redis.call('XADD', KEYS[2], offset .. '-0', unpack(fields))
          for j = 1, #fields, 2 do
            if fields[j] == 'key' then redis.call('HSET', KEYS[3], fields[j + 1], offset) end
          end
          i = i + 2 + count
        end
        redis.call('ZADD', KEYS[5], 0, ARGV[4])
        if ARGV[5] == '1' then redis.call('ZADD', KEYS[6], ARGV[6], ARGV[4]) else redis.call('ZREM', KEYS[6], ARGV[4]) end
        if ARGV[7] ~= '' then redis.call('ZADD', KEYS[7], ARGV[7], ARGV[4]) else redis.call('ZREM', KEYS[7], ARGV[4]) end
        return {'OK'}
        """

    /// Removes a terminal order whose last update is at or before the cutoff (re-checked inside the script, so a
    /// concurrent change is never lost).
    ///
    /// KEYS: order hash, history stream, idempotency hash, orders set, terminal set, aging set.
    /// ARGV: member, cutoff. Returns 1 when removed, 0 otherwise.
    static let removeTerminal = """
        local score = redis.call('ZSCORE', KEYS[5], ARGV[1])
        if not score or tonumber(score) > tonumber(ARGV[2]) then return 0 end
        redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
        redis.call('ZREM', KEYS[4], ARGV[1])
        redis.call('ZREM', KEYS[5], ARGV[1])
        redis.call('ZREM', KEYS[6], ARGV[1])
        return 1
        """

    /// Drops an order's records older than the cutoff, except its latest (timestamps never go backwards within an
    /// order, so they are a prefix of the stream), with their idempotency keys; re-scores the order in the aging
    /// set by its oldest remaining record other than the latest, or removes it.
    ///
    /// KEYS: order hash, history stream, idempotency hash, aging set. ARGV: member, cutoff.
    /// Returns the number of records dropped.
    static let ageHistory = """
        local last = redis.call('HGET', KEYS[1], 'offset')
        if not last then
          redis.call('ZREM', KEYS[4], ARGV[1])
          return 0
        end
        local cutoff = tonumber(ARGV[2])
        local entries = redis.call('XRANGE', KEYS[2], '-', '+')
        local removed = 0
        local keep = nil
        for _, entry in ipairs(entries) do
          local offset = string.match(entry[1], '^%d+')
          local fields = entry[2]
          local ts = 0
          local key = nil
          for i = 1, #fields, 2 do
            if fields[i] == 'ts' then ts = tonumber(fields[i + 1]) elseif fields[i] == 'key' then key = fields[i + 1] end
          end
          if offset == last or ts >= cutoff then
            keep = {entry[1], ts, offset}
            break
          end
          if key and redis.call('HGET', KEYS[3], key) == offset then redis.call('HDEL', KEYS[3], key) end
          removed = removed + 1
        end
        if keep then
          if removed > 0 then redis.call('XTRIM', KEYS[2], 'MINID', keep[1]) end
          if keep[3] == last then
            redis.call('ZREM', KEYS[4], ARGV[1])
          else
            redis.call('ZADD', KEYS[4], keep[2], ARGV[1])
          end
        end
        return removed
        """

    /// Every script, for `SCRIPT LOAD` on connect.
    static let all = [apply, applySharded, replay, importOrder, removeTerminal, ageHistory]
}
