"""
A contactless card for vsmartcard's vpcd reader driver (pcscd with
vsmartcard-vpcd), since bookworm's vicc does not start.

vpcd listens on TCP (port 35963 for its first reader, or the CHANNELID of
its reader.conf entry); a card connects to it. Every message either way is
framed by a 2-byte big-endian length. A 1-byte message from the reader is
a control command: 0 power off, 1 power on, 2 reset (no answer), 4 "send
your ATR". Anything longer is an APDU, answered with the response APDU.
Closing the socket takes the card off the reader.

    card = Card(port, atr=ATR, uid=UID)   # or uid=None: GET DATA fails
    card.insert(); ...; card.remove()

As a program: card_emulator.py PORT [UID_HEX | -], serving until killed.
"""
import socket
import struct
import sys
import threading
import time

ATR = bytes.fromhex('3B8F8001804F0CA000000306030001000000006A')
GET_DATA_UID = bytes.fromhex('FFCA000000')
SW_OK = b'\x90\x00'
SW_WRONG_P1P2 = b'\x6a\x81'  # "function not supported": no UID from this card
SW_INS_UNKNOWN = b'\x6d\x00'


class Card:
    def __init__(self, port, atr=ATR, uid=None, host='127.0.0.1'):
        self.port = port
        self.host = host
        self.atr = atr
        self.uid = uid
        self.sock = None
        self.thread = None
        self.apdus = []  # what the reader sent, for the test to look at

    def insert(self, timeout=10.0):
        """Connects to the reader, waiting for it to listen."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.create_connection((self.host, self.port), timeout=1.0)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self.sock.settimeout(None)
        self.thread = threading.Thread(target=self._serve, args=(self.sock,), daemon=True)
        self.thread.start()

    def remove(self):
        if self.sock:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.sock.close()
            self.sock = None
        if self.thread:
            self.thread.join(timeout=5)
            self.thread = None

    @staticmethod
    def _recv_exact(sock, n):
        data = b''
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    def _send(self, sock, payload):
        sock.sendall(struct.pack('>H', len(payload)) + payload)

    def answer(self, apdu):
        if apdu == GET_DATA_UID:
            return self.uid + SW_OK if self.uid is not None else SW_WRONG_P1P2
        return SW_INS_UNKNOWN

    def _serve(self, sock):
        try:
            while True:
                head = self._recv_exact(sock, 2)
                if head is None:
                    return
                (length,) = struct.unpack('>H', head)
                msg = self._recv_exact(sock, length)
                if msg is None:
                    return
                if length == 1:
                    if msg[0] == 4:
                        self._send(sock, self.atr)
                    # 0 off, 1 on, 2 reset: nothing to say
                    continue
                self.apdus.append(msg)
                self._send(sock, self.answer(msg))
        except OSError:
            return


def main():
    port = int(sys.argv[1])
    uid = None
    if len(sys.argv) > 2 and sys.argv[2] != '-':
        uid = bytes.fromhex(sys.argv[2])
    card = Card(port, uid=uid)
    card.insert()
    print('inserted', flush=True)
    try:
        card.thread.join()
    except KeyboardInterrupt:
        card.remove()


if __name__ == '__main__':
    main()
