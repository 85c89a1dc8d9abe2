#!/usr/bin/env python3
"""varlink_client: an independent Varlink client (Python 3 standard library only) that talks
to entropyd's control socket as any generic Varlink client would: GetInfo,
GetInterfaceDescription, then io.entropyd.GetStatus and GetSources, each reply checked against
the types the published interface description declares. Also: oneway, an unknown method.

usage: varlink_client.py SOCKET    prints "events=N instances=M" from GetStatus on success
"""
import json
import re
import socket
import sys


class Conn:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self.buf = b""

    def send(self, method, parameters=None, **flags):
        msg = {"method": method}
        if parameters is not None:
            msg["parameters"] = parameters
        msg.update(flags)
        self.sock.sendall(json.dumps(msg).encode() + b"\0")

    def receive(self):
        while b"\0" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise SystemExit("varlink_client: connection closed before a reply")
            self.buf += chunk
        msg, _, self.buf = self.buf.partition(b"\0")
        reply = json.loads(msg)
        if not isinstance(reply, dict):
            raise SystemExit("varlink_client: a reply that is not an object: %r" % reply)
        return reply

    def call(self, method, parameters=None):
        self.send(method, parameters)
        reply = self.receive()
        if "error" in reply:
            raise SystemExit("varlink_client: %s failed: %s %s"
                             % (method, reply["error"], reply.get("parameters")))
        return reply.get("parameters") or {}


# ---- the interface description: a parser of the Varlink grammar, written apart from the C one

TOKEN = re.compile(r"\s+|#[^\n]*|->|[()\[\]?:,]|[A-Za-z_][A-Za-z0-9_.]*")


def tokens(text):
    out, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise SystemExit("varlink_client: bad character in description at %r"
                             % text[pos:pos + 20])
        tok = m.group(0)
        pos = m.end()
        if not tok.isspace() and not tok.startswith("#"):
            out.append(tok)
    return out


class Idl:
    def __init__(self, text):
        self.t = tokens(text)
        self.i = 0
        self.types, self.methods, self.errors = {}, {}, {}
        self.expect("interface")
        self.name = self.next()
        while self.i < len(self.t):
            kind, name = self.next(), self.next()
            if kind == "type":
                self.types[name] = self.struct()
            elif kind == "method":
                args = self.struct()
                self.expect("->")
                self.methods[name] = (args, self.struct())
            elif kind == "error":
                self.errors[name] = self.struct()
            else:
                raise SystemExit("varlink_client: unknown keyword %r" % kind)

    def next(self):
        self.i += 1
        return self.t[self.i - 1]

    def expect(self, tok):
        got = self.next()
        if got != tok:
            raise SystemExit("varlink_client: expected %r, got %r" % (tok, got))

    def struct(self):
        """A struct as {field: type}, or an enum as ("enum", [names])."""
        self.expect("(")
        fields, names = {}, []
        while self.t[self.i] != ")":
            name = self.next()
            if self.t[self.i] == ":":
                self.i += 1
                fields[name] = self.type()
            else:
                names.append(name)
            if self.t[self.i] == ",":
                self.i += 1
        self.i += 1
        return ("enum", names) if names else fields

    def type(self):
        tok = self.next()
        if tok == "?":
            return ("maybe", self.type())
        if tok == "[":
            if self.t[self.i] == "]":
                self.i += 1
                return ("array", self.type())
            self.expect("string")
            self.expect("]")
            return ("map", self.type())
        if tok == "(":
            self.i -= 1
            return self.struct()
        return tok

    def check(self, value, typ, where):
        """Raise unless value has type typ: no missing field, no undeclared one."""
        def fail(what):
            raise SystemExit("varlink_client: %s: %s (%r)" % (where, what, value))
        if isinstance(typ, tuple) and typ[0] == "maybe":
            if value is not None:
                self.check(value, typ[1], where)
        elif value is None:
            fail("null where %r is declared" % (typ,))
        elif isinstance(typ, tuple) and typ[0] == "array":
            if not isinstance(value, list):
                fail("not an array")
            for k, v in enumerate(value):
                self.check(v, typ[1], "%s[%d]" % (where, k))
        elif isinstance(typ, tuple) and typ[0] == "map":
            if not isinstance(value, dict):
                fail("not a map")
            for k, v in value.items():
                self.check(v, typ[1], "%s[%s]" % (where, k))
        elif isinstance(typ, tuple) and typ[0] == "enum":
            if value not in typ[1]:
                fail("not one of %s" % typ[1])
        elif isinstance(typ, dict):
            if not isinstance(value, dict):
                fail("not an object")
            for k in value:
                if k not in typ:
                    fail("undeclared field %r" % k)
            for k, t in typ.items():
                self.check(value.get(k), t, where + "." + k)
        elif typ == "bool":
            if not isinstance(value, bool):
                fail("not a bool")
        elif typ == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                fail("not an int")
        elif typ == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                fail("not a float")
        elif typ == "string":
            if not isinstance(value, str):
                fail("not a string")
        elif typ == "object":
            if not isinstance(value, dict):
                fail("not an object")
        elif typ in self.types:
            self.check(value, self.types[typ], where)
        else:
            fail("unknown type %r" % (typ,))


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    c = Conn(sys.argv[1])

    info = c.call("org.varlink.service.GetInfo")
    for key in ("vendor", "product", "version", "url"):
        if not isinstance(info.get(key), str):
            raise SystemExit("varlink_client: GetInfo lacks %s" % key)
    if not {"org.varlink.service", "io.entropyd"} <= set(info.get("interfaces", [])):
        raise SystemExit("varlink_client: GetInfo interfaces: %r" % info.get("interfaces"))

    idl = {}
    for iface in info["interfaces"]:
        desc = c.call("org.varlink.service.GetInterfaceDescription", {"interface": iface})
        idl[iface] = Idl(desc["description"])
        if idl[iface].name != iface:
            raise SystemExit("varlink_client: %s describes itself as %s" % (iface, idl[iface].name))
    service, entropyd = idl["org.varlink.service"], idl["io.entropyd"]
    service.check(info, service.methods["GetInfo"][1], "GetInfo")

    status = c.call("io.entropyd.GetStatus")
    entropyd.check(status, entropyd.methods["GetStatus"][1], "GetStatus")
    sources = c.call("io.entropyd.GetSources")
    entropyd.check(sources, entropyd.methods["GetSources"][1], "GetSources")

    # oneway: no reply at all, so the next reply is the next call's.
    c.send("io.entropyd.GetStatus", oneway=True)
    c.send("org.varlink.service.GetInfo")
    if c.receive().get("parameters", {}).get("vendor") != info["vendor"]:
        raise SystemExit("varlink_client: a oneway call was answered")

    # An unknown method: the standard error, with its declared parameter.
    c.send("io.entropyd.NoSuchMethod")
    reply = c.receive()
    if reply.get("error") != "org.varlink.service.MethodNotFound":
        raise SystemExit("varlink_client: unknown method: %r" % reply)
    service.check(reply.get("parameters"), service.errors["MethodNotFound"], "MethodNotFound")

    print("events=%d instances=%d" % (status["totals"]["events"], len(sources["sources"])))


if __name__ == "__main__":
    main()
