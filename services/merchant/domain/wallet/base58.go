package wallet

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"math/big"
)

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// errChecksum reports a Base58Check string whose checksum does not match (a typo).
var errChecksum = errors.New("checksum mismatch (mistyped or truncated)")

// base58CheckEncode writes b followed by the first 4 bytes of its double SHA-256, in Base58:
// the form of BIP-32's serialised keys.
func base58CheckEncode(b []byte) string {
	sum := checksum(b)
	data := append(append([]byte(nil), b...), sum[:]...)
	n := new(big.Int).SetBytes(data)
	mod, base := new(big.Int), big.NewInt(58)
	var out []byte
	for n.Sign() > 0 {
		n.DivMod(n, base, mod)
		out = append(out, base58Alphabet[mod.Int64()])
	}
	for _, c := range data {
		if c != 0 {
			break
		}
		out = append(out, base58Alphabet[0]) // a leading zero byte is a leading '1'
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

// base58CheckDecode reverses base58CheckEncode, checking the checksum.
func base58CheckDecode(s string) ([]byte, error) {
	n, base := new(big.Int), big.NewInt(58)
	zeros := 0
	for zeros < len(s) && s[zeros] == base58Alphabet[0] {
		zeros++
	}
	for _, c := range []byte(s) {
		i := bytes.IndexByte([]byte(base58Alphabet), c)
		if i < 0 {
			return nil, errors.New("not Base58")
		}
		n.Mul(n, base)
		n.Add(n, big.NewInt(int64(i)))
	}
	data := append(make([]byte, zeros), n.Bytes()...)
	if len(data) < 4 {
		return nil, errors.New("too short")
	}
	body, sum := data[:len(data)-4], data[len(data)-4:]
	if want := checksum(body); !bytes.Equal(sum, want[:]) {
		return nil, errChecksum
	}
	return body, nil
}

func checksum(b []byte) [4]byte {
	first := sha256.Sum256(b)
	second := sha256.Sum256(first[:])
	return [4]byte(second[:4])
}
