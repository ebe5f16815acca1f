"""cosmic-ray's test command: ask the judge server for one mutant's verdict and exit with it.

Run as a script (``python -I -S client.py SOCKET EXERCISE FILE``), it imports only the standard
library, so it starts in a few hundredths of a second. It prints the server's one-line reason and
exits 0 if the mutant survived the visible check, 1 if it was killed; a child that died without an
answer (its alarm: the timeout) is reported as killed by the timeout.
"""
import socket
import sys


def main(argv: list[str]) -> int:
    socket_path, exercise, path = argv
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.connect(socket_path)
        client.sendall(f"{exercise}\t{path}\n".encode())
        answer = b""
        while chunk := client.recv(65536):
            answer += chunk
    status, _, why = answer.decode("utf-8", "replace").rstrip("\n").partition("\t")
    if status not in ("0", "1"):
        print("killed: timeout (the judge ended without a verdict)")
        return 1
    print(why)
    return int(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
