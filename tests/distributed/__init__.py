"""Tests of minitensor.distributed: MPI workers under mpiexec (launch.py), the sampler, the rendezvous."""
