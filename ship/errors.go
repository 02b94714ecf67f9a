package ship

import "errors"

var (
	// ErrBadConfig is returned (wrapped) for an object storage
	// configuration that cannot be parsed or names no supported provider.
	ErrBadConfig = errors.New("ship: bad object storage config")
	// ErrSync is returned (wrapped, together with each block's error) by
	// Sync when one or more blocks failed to upload; they are tried again
	// on the next Sync.
	ErrSync = errors.New("ship: blocks failed to upload")
	// ErrShipperFile is returned (wrapped) when thanos.shipper.json
	// cannot be read or decoded.
	ErrShipperFile = errors.New("ship: bad shipper file")
)
