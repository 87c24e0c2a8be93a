#!/usr/bin/env python3
"""Which QUIC handshakes in a capture resumed a TLS session, read off the wire.

Usage: quic_psk.py CAPTURE.pcap SERVER_PORT

For each connection (client UDP port and server connection ID) of a tcpdump capture of QUIC v1 on
IPv4, decrypts the server's Initial packets (their keys come from the client's first
Destination Connection ID, RFC 9001 §5.2, so no secrets are needed) and reads the
ServerHello: it carries the pre_shared_key extension (41) exactly when the server
accepted a resumption. Prints one line per connection and the totals:
`full N resumed M`. Needs python3-cryptography. A measuring aid for bench/README.md.
"""

import struct
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hmac import HMAC

INITIAL_SALT = bytes.fromhex("38762cf7f55934b34d179ae6a4c80cadccbb7f0a")
PRE_SHARED_KEY = 41


def hkdf_extract(salt, ikm):
    h = HMAC(salt, hashes.SHA256())
    h.update(ikm)
    return h.finalize()


def hkdf_expand_label(secret, label, length):
    full = b"tls13 " + label
    info = struct.pack(">HB", length, len(full)) + full + b"\x00"
    out, block, i = b"", b"", 1
    while len(out) < length:
        h = HMAC(secret, hashes.SHA256())
        h.update(block + info + bytes([i]))
        block = h.finalize()
        out += block
        i += 1
    return out[:length]


def server_keys(dcid):
    secret = hkdf_expand_label(hkdf_extract(INITIAL_SALT, dcid), b"server in", 32)
    return (
        hkdf_expand_label(secret, b"quic key", 16),
        hkdf_expand_label(secret, b"quic iv", 12),
        hkdf_expand_label(secret, b"quic hp", 16),
    )


def varint(b, i):
    first = b[i]
    n = 1 << (first >> 6)
    v = first & 0x3F
    for k in range(1, n):
        v = (v << 8) | b[i + k]
    return v, i + n


def udp_datagrams(path):
    """(src_port, dst_port, payload) of each IPv4 UDP packet in a pcap file."""
    with open(path, "rb") as f:
        data = f.read()
    magic = data[:4]
    endian = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    link = struct.unpack(endian + "I", data[20:24])[0]
    skip = {1: 14, 113: 16, 276: 20, 0: 4}.get(link)
    if skip is None:
        sys.exit(f"quic_psk.py: unsupported link type {link}")
    i = 24
    while i + 16 <= len(data):
        incl = struct.unpack(endian + "I", data[i + 8 : i + 12])[0]
        pkt = data[i + 16 : i + 16 + incl]
        i += 16 + incl
        ip = pkt[skip:]
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 17:
            continue
        ihl = (ip[0] & 0x0F) * 4
        sport, dport = struct.unpack(">HH", ip[ihl : ihl + 4])
        yield sport, dport, ip[ihl + 8 :]


def long_header(d):
    """(type, dcid, scid, header_len_to_pn, payload_len) of a long-header packet."""
    if not d or not d[0] & 0x80:
        return None
    i = 5
    dcid = d[i + 1 : i + 1 + d[i]]
    i += 1 + d[i]
    scid = d[i + 1 : i + 1 + d[i]]
    i += 1 + d[i]
    kind = (d[0] & 0x30) >> 4
    if kind == 0:
        tlen, i = varint(d, i)
        i += tlen
    length, i = varint(d, i)
    return kind, dcid, scid, i, length


def open_initial(d, keys):
    """The decrypted payload of the Initial packet at the start of `d`."""
    kind, _, _, pn_at, length = long_header(d)
    key, iv, hp = keys
    sample = d[pn_at + 4 : pn_at + 20]
    enc = Cipher(algorithms.AES(hp), modes.ECB()).encryptor()
    mask = enc.update(sample) + enc.finalize()
    first = d[0] ^ (mask[0] & 0x0F)
    pn_len = (first & 3) + 1
    pn = bytes(x ^ m for x, m in zip(d[pn_at : pn_at + pn_len], mask[1:]))
    header = bytes([first]) + d[1:pn_at] + pn
    nonce = bytes(a ^ b for a, b in zip(iv, int.from_bytes(pn, "big").to_bytes(12, "big")))
    body = d[pn_at + pn_len : pn_at + length]
    return AESGCM(key).decrypt(nonce, body, header)


def crypto_data(payload):
    """The CRYPTO frames' bytes, by offset, of a decrypted Initial payload."""
    out, i = {}, 0
    while i < len(payload):
        t = payload[i]
        if t == 0x00 or t == 0x01:
            i += 1
        elif t in (0x02, 0x03):
            i += 1
            _, i = varint(payload, i)
            _, i = varint(payload, i)
            count, i = varint(payload, i)
            _, i = varint(payload, i)
            for _ in range(count):
                _, i = varint(payload, i)
                _, i = varint(payload, i)
            if t == 0x03:
                for _ in range(3):
                    _, i = varint(payload, i)
        elif t == 0x06:
            off, i = varint(payload, i + 1)
            n, i = varint(payload, i)
            out[off] = payload[i : i + n]
            i += n
        else:
            break
    return out


def server_hello_extensions(hello):
    """The extension types of a ServerHello handshake message."""
    if len(hello) < 4 or hello[0] != 2:
        return None
    i = 4 + 2 + 32
    i += 1 + hello[i]
    i += 2 + 1
    end = i + 2 + struct.unpack(">H", hello[i : i + 2])[0]
    i += 2
    types = []
    while i + 4 <= end:
        t, n = struct.unpack(">HH", hello[i : i + 4])
        types.append(t)
        i += 4 + n
    return types


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    port = int(sys.argv[2])
    # A connection is (client port, server's connection ID): a port may be reused.
    # Its Initial keys come from the client's first DCID on that port, which is not
    # one of the server's connection IDs.
    odcid, server_cids, hellos, order = {}, set(), {}, []
    for sport, dport, d in udp_datagrams(sys.argv[1]):
        h = long_header(d)
        if h is None or h[0] != 0:
            continue
        if dport == port:
            if (sport, h[1]) not in server_cids:
                odcid[sport] = h[1]
        elif sport == port and dport in odcid:
            try:
                data = crypto_data(open_initial(d, server_keys(odcid[dport])))
            except Exception:
                continue
            key = (dport, h[2])
            server_cids.add(key)
            if key not in hellos:
                order.append(key)
            hellos.setdefault(key, {}).update(data)
    full = resumed = 0
    for key in order:
        parts = hellos[key]
        hello, at = b"", 0
        while at in parts:
            hello += parts[at]
            at += len(parts[at])
        exts = server_hello_extensions(hello)
        if exts is None:
            print(f"client port {key[0]}: no ServerHello seen")
            continue
        psk = PRE_SHARED_KEY in exts
        full += not psk
        resumed += psk
        print(f"client port {key[0]}: {'resumed' if psk else 'full'}")
    print(f"full {full} resumed {resumed}")


if __name__ == "__main__":
    main()
