package rclient

import (
	"errors"
	"fmt"
	"strings"
)

// ErrCrossSlot is returned (wrapped) by cluster adapters for a command or
// script whose keys hash to more than one slot. Redis would refuse it with
// CROSSSLOT, and rueidis panics while building it, so both adapters refuse it
// before anything is sent.
var ErrCrossSlot = errors.New("rclient: keys hash to different cluster slots")

// errEmptyCommand is returned for a Command without a name; rueidis panics on
// one, go-redis sends garbage.
var errEmptyCommand = errors.New("rclient: command has no name")

// Slot returns the Redis Cluster hash slot of key: CRC16 (XMODEM) mod 16384 of
// the key, or of its hash tag, the part between the first '{' and the next
// '}' when that part is not empty.
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for k := 0; k < len(key); k++ {
		crc = crc<<8 ^ crc16tab[byte(crc>>8)^key[k]]
	}
	return int(crc) & 16383
}

// checkCommand refuses what a library would panic on or Redis would reject
// only after a round trip. Pub/sub is refused because a subscribed
// connection no longer answers ordinary commands.
func checkCommand(c Command, cluster bool) error {
	if len(c.Head) == 0 || c.Head[0] == "" {
		return errEmptyCommand
	}
	if strings.HasSuffix(strings.ToUpper(c.Head[0]), "SUBSCRIBE") {
		return fmt.Errorf("rclient: %s: pub/sub is not supported", c.Head[0])
	}
	if cluster {
		return checkSlots(c.Head[0], c.Keys)
	}
	return nil
}

func checkSlots(name string, keys []string) error {
	if len(keys) < 2 {
		return nil
	}
	first := Slot(keys[0])
	for _, k := range keys[1:] {
		if s := Slot(k); s != first {
			return fmt.Errorf("%w: %s: %q is in slot %d, %q in slot %d",
				ErrCrossSlot, name, keys[0], first, k, s)
		}
	}
	return nil
}

// crc16tab is CRC16-CCITT (XMODEM, polynomial 0x1021), as in Redis's crc16.c.
var crc16tab = func() (t [256]uint16) {
	for i := range t {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()
