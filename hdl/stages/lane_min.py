"""One node of the N-lane decoder's least-loaded-lane search (``ASSIGN="load"``): the smaller of two loads and its lane.

Interface
---------
av, bv          the two loads
ai, bi          their lanes (``None``: the constants ``IA`` / ``IB``, for the leaves)
ov, oi          the smaller load and its lane; ``a`` on a tie (the tree puts lower lanes on the ``a`` side, so a tie
                goes to the lowest lane)
"""
from myhdl import always_comb, block


@block
def lane_min(av, ai, bv, bi, ov, oi, IA=0, IB=1):
    leaf = ai is None
    if leaf:  # a leaf's lanes are constants, a node's the signals of the level below
        ai, bi = IA, IB

    def pick():
        if av <= bv:
            ov.next = av
            oi.next = ai
        else:
            ov.next = bv
            oi.next = bi

    # the process label in the converted HDL (MyHDL takes the function's name)
    pick.__name__ = "min_leaf" if leaf else "min_node"
    return always_comb(pick)
