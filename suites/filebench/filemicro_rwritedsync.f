# fsarena built-in: filemicro_rwritedsync (random O_DSYNC writes until $count; filebench's defaults).
set $dir=/tmp
set $count=65536
set $filesize=1g
set $iosize=2k
set $iters=1
set $nthreads=1

define file name=bigfile,path=$dir,size=$filesize,prealloc,reuse

define process name=filewriter,instances=1
{
  thread name=filewriterthread,memsize=10m,instances=$nthreads
  {
    flowop write name=write-file,filename=bigfile,random,dsync,iosize=$iosize,iters=$iters
    flowop finishoncount name=finish,value=$count
  }
}
