"""What both fronts parse of a stripe header (docs/FORMAT.md): its top 16 bits are the marker."""
from lutzip.codec.bitstream import STRIPE_MARKER

#: The top 16 bits of a stripe header word (``tdata[31:16]``): the one definition is the codec's
#: ``STRIPE_MARKER``.
MARKER = STRIPE_MARKER >> 16
