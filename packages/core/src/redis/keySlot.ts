/** Slots of a Redis Cluster: every key maps to one of them. */
export const CLUSTER_SLOTS = 16384;

/** CRC16/XMODEM of `text`'s UTF-8 bytes: the hash Redis Cluster maps keys to slots with. */
function crc16(text: string): number {
  let crc = 0;
  for (const byte of Buffer.from(text, "utf8")) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc;
}

/**
 * The Redis Cluster slot of `key`, as `CLUSTER KEYSLOT` computes it: of its hash tag (the
 * text between the first `{` and the next `}`) when it has a non-empty one, else of the key.
 *
 * @example keySlot("foo") // 12182 · keySlot("yiem:s:{abc}:messages") === keySlot("abc")
 */
export function keySlot(key: string): number {
  const open = key.indexOf("{");
  const close = open === -1 ? -1 : key.indexOf("}", open + 1);
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  return crc16(hashed) % CLUSTER_SLOTS;
}
