"""The solvers: the general convex route, and the special solvers that take the problems
whose structure they exploit (column generation, rays, lazy pairs, Charnes–Cooper, couplings),
with the HiGHS helpers and the proven bounds they share."""
